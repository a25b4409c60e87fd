//go:build race

package main

// raceEnabled: the race detector multiplies the memory a program holds
// several times over.
const raceEnabled = true
