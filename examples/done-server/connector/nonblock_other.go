//go:build !unix

package connector

// openNoBlock is 0 where FIFOs do not block an open as on Unix; Lstat
// still keeps anything but a regular file from being opened.
const openNoBlock = 0
