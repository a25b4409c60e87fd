//go:build !unix

package main

import "time"

// cpuTime returns 0: this system has no getrusage.
func cpuTime() time.Duration { return 0 }
