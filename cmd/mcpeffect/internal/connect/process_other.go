//go:build !unix

package connect

import "os/exec"

// Where there are no process groups (Windows), only the server itself is
// ended.
func ownProcessGroup(*exec.Cmd) {}

// terminateProcessGroup does nothing: Windows has no SIGTERM, and the
// kill that follows ends the server.
func terminateProcessGroup(*exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) { cmd.Process.Kill() }
