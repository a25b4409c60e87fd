package main

import (
	"math"
	"slices"
)

// A summary is what the rounds of one measure say: their median, their
// range, and the interval in which the median of all such rounds lies
// with a confidence of at least 95%, from the rounds' order alone (no
// assumption on how the noise is distributed). With fewer than 6 rounds
// there is no such interval: ok is false.
type summary struct {
	median, min, max float64
	ciLow, ciHigh    float64
	ciOK             bool
	// confidence is the interval's confidence, at least 0.95.
	confidence float64
}

// summarize returns the summary of xs, which it does not change; the
// zero summary for none.
func summarize(xs []float64) summary {
	if len(xs) == 0 {
		return summary{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	sum := summary{min: s[0], max: s[n-1], median: median(s)}
	if k := ciRank(n); k > 0 {
		// The k-th smallest and the k-th largest, counted from 1.
		sum.ciLow, sum.ciHigh, sum.ciOK = s[k-1], s[n-k], true
		sum.confidence = 1 - 2*binomialTail(n, k-1)
	}
	return sum
}

// median returns the median of sorted, which holds at least one value.
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}

// ciRank returns the largest k such that the k-th smallest and the k-th
// largest of n values bound their median with a confidence of at least
// 95%: each misses it with the probability that at most k-1 of n fair
// coins land heads, which must be at most 2.5%. It returns 0 when no k
// does (n < 6).
func ciRank(n int) int {
	k := 0
	for j := 1; j <= (n+1)/2; j++ {
		if binomialTail(n, j-1) > 0.025 {
			break
		}
		k = j
	}
	return k
}

// binomialTail returns the probability that at most k of n fair coins
// land heads.
func binomialTail(n, k int) float64 {
	p := 0.0
	for i := 0; i <= k; i++ {
		p += math.Exp(lchoose(n, i) - float64(n)*math.Ln2)
	}
	return p
}

// lchoose returns the natural logarithm of n choose k.
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
