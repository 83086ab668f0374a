// Package carried gives the tests of every place a turn reading passes
// through (the line fields, the verdict's readers, the joined form, the
// stored codec, the verdict span, the page) one way to ask whether each
// reading the verdict carries got through: a value of its registered type
// for each, put on a voice.turn span, and what is missing at the far end.
// The readings are semconv.CarriedOnVerdict's, so a reading added to the
// registry is asked of every place at once.
package carried

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
)

// Names are the readings the verdict carries.
func Names() []string { return semconv.CarriedOnVerdict() }

// Value is the value Put gives the i-th reading of Names: of its
// registered type, distinct from the others' (so a reading carried into
// another's place is seen), and well formed (so no reader refuses it: the
// counts go down along the registry, so a tally comes after the one before
// it).
func Value(i int, name string) pcommon.Value {
	n, ok := semconv.Lookup(name)
	if !ok {
		panic("carried: " + name + " is not registered")
	}
	switch n.Type {
	case "double":
		return pcommon.NewValueDouble(1.25 + float64(i))
	case "int":
		return pcommon.NewValueInt(int64(100 - i))
	case "bool":
		return pcommon.NewValueBool(true)
	case "string[]":
		v := pcommon.NewValueSlice()
		v.Slice().AppendEmpty().SetStr(semconv.BluetoothPortPrefix + "a2dp")
		return v
	}
	panic(fmt.Sprintf("carried: %s has type %q, which the test cannot make a value of: add it here", name, n.Type))
}

// Put sets every carried reading on a, a voice.turn span's attributes.
func Put(a pcommon.Map) {
	for i, name := range Names() {
		Value(i, name).CopyTo(a.PutEmpty(name))
	}
}

// Missing names the carried readings a does not hold with the value Put
// gave them.
func Missing(a pcommon.Map) []string {
	var out []string
	for i, name := range Names() {
		if v, ok := a.Get(name); !ok || !v.Equal(Value(i, name)) {
			out = append(out, name)
		}
	}
	return out
}

// Absent names the carried readings a does not hold at all (for a place
// that carries a reading it did not get from Put).
func Absent(a pcommon.Map) []string {
	var out []string
	for _, name := range Names() {
		if _, ok := a.Get(name); !ok {
			out = append(out, name)
		}
	}
	return out
}
