//go:build !race

package main

// raceEnabled reports whether the tests run with the race detector, and
// so build done-server with it.
const raceEnabled = false
