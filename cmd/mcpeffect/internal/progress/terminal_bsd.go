//go:build darwin || dragonfly || freebsd || netbsd || openbsd

package progress

import (
	"syscall"
	"unsafe"
)

// isTerminal asks the system for the terminal's settings of fd, which
// only a terminal has.
func isTerminal(fd uintptr) bool {
	var t syscall.Termios
	_, _, errno := syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCGETA, uintptr(unsafe.Pointer(&t)))
	return errno == 0
}
