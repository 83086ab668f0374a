package verdict

import (
	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
)

// Kinds of attribute index.
const (
	indexUnit = iota + 1
	indexTake
)

// attrIndex holds the values of the few keys the rules read from a unit or
// a take, found in a single pass over its attributes.
type attrIndex struct {
	kind uint8
	has  uint8
	vals [6]pcommon.Value
	// joined: a key of the joined form (joinedPrefix) is among them.
	joined bool
}

func (x *attrIndex) slot(k string) int {
	if x.kind == indexUnit {
		return unitKey(k)
	}
	return takeKey(k)
}

// index scans m once (the first of a key sent twice wins, as with Map.Get),
// and notes whether a key of the joined form is there (its second byte
// tells it from pippa.*, before the prefix is compared).
func (x *attrIndex) index(kind uint8, m pcommon.Map) {
	x.kind = kind
	for k, v := range m.All() {
		if i := x.slot(k); i >= 0 {
			if x.has&(1<<i) == 0 {
				x.vals[i], x.has = v, x.has|1<<i
			}
		} else if len(k) > len(joinedPrefix) && k[1] == joinedPrefix[1] && k[:len(joinedPrefix)] == joinedPrefix {
			x.joined = true
		}
	}
}

// unitKey numbers the voice.unit keys the rules read.
func unitKey(k string) int {
	switch k {
	case semconv.UnitIndex:
		return 0
	case semconv.TakeID:
		return 1
	case semconv.UnitUnderruns:
		return 2
	case semconv.UnitSilent:
		return 3
	case semconv.UnitCushion:
		return 4
	case semconv.UnitLead:
		return 5
	}
	return -1
}

// takeKey numbers the tts.take keys the rules read.
func takeKey(k string) int {
	switch k {
	case semconv.TakeID:
		return 0
	case semconv.TakeNeed:
		return 1
	}
	return -1
}
