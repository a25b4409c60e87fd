package telemetry

import (
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// A setKey names the attributes of one data point of one instrument.
type setKey struct {
	instrument                 uint8
	method, target, outcome    string
	scope, errType, code       string
	protocolVersion, transport string
}

// The instruments of setKey.
const (
	instDecisions uint8 = iota
	instAnswers
	instDuration
)

// A point is the attributes of a data point, as an instrument takes
// them.
type point struct {
	set attribute.Set
	add []metric.AddOption
}

// sets holds the points the metrics were given, built once each: a set
// is sorted and deduplicated each time it is made, and most operations
// share a few. Every field of a key is bounded by what the server knows
// (its methods, the tools its registry classifies, its error codes), not
// by what a caller sends, and past maxSets a point is built each time
// rather than kept, so that the cache cannot grow without end.
type sets struct {
	m sync.Map // setKey to *point
	n atomic.Int64
}

const maxSets = 4096

// get returns the point of k, made of attrs if it is not kept yet.
func (s *sets) get(k setKey, attrs func() []attribute.KeyValue) *point {
	if p, ok := s.m.Load(k); ok {
		return p.(*point)
	}
	set := attribute.NewSet(attrs()...)
	p := &point{set: set, add: []metric.AddOption{metric.WithAttributeSet(set)}}
	if s.n.Load() >= maxSets {
		return p
	}
	if have, loaded := s.m.LoadOrStore(k, p); loaded {
		return have.(*point)
	}
	s.n.Add(1)
	return p
}
