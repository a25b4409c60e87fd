package main

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tt := range []struct {
		name             string
		xs               []float64
		median, min, max float64
		ciOK             bool
		ciLow, ciHigh    float64
	}{
		{name: "none"},
		{name: "one", xs: []float64{3}, median: 3, min: 3, max: 3},
		{name: "even", xs: []float64{4, 1, 3, 2}, median: 2.5, min: 1, max: 4},
		{name: "odd, unsorted", xs: []float64{5, 1, 4, 2, 3}, median: 3, min: 1, max: 5},
		// Six rounds are the fewest with an interval: their extremes,
		// which miss the median with a chance of 2 in 64 together.
		{name: "six", xs: []float64{6, 5, 4, 3, 2, 1}, median: 3.5, min: 1, max: 6, ciOK: true, ciLow: 1, ciHigh: 6},
		// Of 15, the 4th smallest and the 4th largest.
		{name: "fifteen", xs: []float64{15, 1, 14, 2, 13, 3, 12, 4, 11, 5, 10, 6, 9, 7, 8},
			median: 8, min: 1, max: 15, ciOK: true, ciLow: 4, ciHigh: 12},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]float64(nil), tt.xs...)
			s := summarize(tt.xs)
			if s.median != tt.median || s.min != tt.min || s.max != tt.max || s.ciOK != tt.ciOK || s.ciLow != tt.ciLow || s.ciHigh != tt.ciHigh {
				t.Errorf("summarize(%v) = %+v", tt.xs, s)
			}
			for i := range in {
				if in[i] != tt.xs[i] {
					t.Fatalf("summarize changed its input: %v, was %v", tt.xs, in)
				}
			}
			if s.ciOK && s.confidence < 0.95 {
				t.Errorf("confidence %v, under 95%%", s.confidence)
			}
		})
	}
}

// TestCIRank holds each rank to its definition: the largest k whose
// two order statistics each miss the median with at most 2.5%, computed
// here with exact integers.
func TestCIRank(t *testing.T) {
	for n := 1; n <= 60; n++ {
		// tail(k) = P(at most k-1 heads of n) = sum_{i<k} C(n,i) / 2^n.
		c := make([]float64, n+1)
		c[0] = 1
		for i := 1; i <= n; i++ {
			c[i] = c[i-1] * float64(n-i+1) / float64(i)
		}
		want := 0
		sum := 0.0
		for k := 1; k <= (n+1)/2; k++ {
			sum += c[k-1]
			if sum/math.Pow(2, float64(n)) > 0.025 {
				break
			}
			want = k
		}
		if got := ciRank(n); got != want {
			t.Errorf("ciRank(%d) = %d, want %d", n, got, want)
		}
	}
	for n, want := range map[int]int{5: 0, 6: 1, 9: 2, 15: 4, 20: 6} {
		if got := ciRank(n); got != want {
			t.Errorf("ciRank(%d) = %d, want %d (tables of the sign test)", n, got, want)
		}
	}
}
