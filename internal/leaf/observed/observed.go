// Package observed keeps a component's own counts where the component
// counts them, in atomics, and reports them through the metrics SDK's
// asynchronous instruments, which read them only when the collector's
// metrics are read. An addition here costs nanoseconds and allocates
// nothing; a synchronous instrument's Add costs 275 ns on its own, with an
// allocation, and more on a busy request's way, several a request
// (docs/decisions/0245-own-counts-are-observed.md). The attribute values
// are a component's fixed vocabulary (causes, reasons, triggers): a count
// is never removed.
package observed

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Set makes a component's observed instruments and unregisters them at
// its shutdown, so a component replaced on a reload stops reporting.
type Set struct {
	meter metric.Meter
	mu    sync.Mutex
	regs  []metric.Registration
}

// NewSet makes the instruments of one component on meter.
func NewSet(meter metric.Meter) *Set { return &Set{meter: meter} }

// Counts are one instrument's counts: one without attributes, or one for
// each value of a single attribute, made at its first addition.
type Counts struct {
	key     string   // the attribute; "" for none
	byValue sync.Map // value → *count
}

type count struct {
	n   atomic.Int64
	opt metric.ObserveOption
}

// Counter makes a monotonic counter, reported once added to; with key,
// its counts are by that attribute.
func (s *Set) Counter(name, description, unit, key string) (*Counts, error) {
	inst, err := s.meter.Int64ObservableCounter(name, metric.WithDescription(description), metric.WithUnit(unit))
	if err != nil {
		return nil, err
	}
	return s.register(inst, &Counts{key: key})
}

// UpDownCounter makes a sum that goes up and down (a number held),
// reported from its first change on, zero included.
func (s *Set) UpDownCounter(name, description, unit string) (*Counts, error) {
	inst, err := s.meter.Int64ObservableUpDownCounter(name, metric.WithDescription(description), metric.WithUnit(unit))
	if err != nil {
		return nil, err
	}
	return s.register(inst, &Counts{})
}

func (s *Set) register(inst metric.Int64Observable, c *Counts) (*Counts, error) {
	reg, err := s.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		c.byValue.Range(func(_, v any) bool {
			k := v.(*count)
			if k.opt == nil {
				o.ObserveInt64(inst, k.n.Load())
			} else {
				o.ObserveInt64(inst, k.n.Load(), k.opt)
			}
			return true
		})
		return nil
	}, inst)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.regs = append(s.regs, reg)
	s.mu.Unlock()
	return c, nil
}

// Shutdown unregisters the instruments' callbacks: from then on they
// report nothing.
func (s *Set) Shutdown() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs error
	for _, reg := range s.regs {
		errs = errors.Join(errs, reg.Unregister())
	}
	s.regs = nil
	return errs
}

// Add adds n to the count of an instrument without attributes.
func (c *Counts) Add(n int64) { c.AddFor("", n) }

// AddFor adds n to the count of the attribute's value.
func (c *Counts) AddFor(value string, n int64) {
	v, ok := c.byValue.Load(value)
	if !ok {
		k := &count{}
		if c.key != "" {
			k.opt = metric.WithAttributeSet(attribute.NewSet(attribute.String(c.key, value)))
		}
		v, _ = c.byValue.LoadOrStore(value, k)
	}
	v.(*count).n.Add(n)
}
