//go:build unix

package connector

import "syscall"

// openNoBlock makes opening a file return at once whatever the file is:
// opening a FIFO for reading otherwise waits for a writer.
const openNoBlock = syscall.O_NONBLOCK
