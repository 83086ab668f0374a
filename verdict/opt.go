package verdict

// Opt is a reading that may be absent: a span that did not report it is
// not a span that reported zero.
type Opt[T any] struct {
	V  T
	OK bool
}

// Some is a reading that is there.
func Some[T any](v T) Opt[T] { return Opt[T]{V: v, OK: true} }

// Ptr is the reading as a pointer, nil when absent (for JSON and the page).
func (o Opt[T]) Ptr() *T {
	if !o.OK {
		return nil
	}
	v := o.V
	return &v
}
