package verdictprocessor

import (
	"container/list"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/instr/semconv"
)

// The installation label of the counted events. Downstream, every
// installation named on them becomes series of its own in Prometheus (about
// 1.7 KB each in the Prometheus exporter, a dozen per installation), so the
// number named is bounded by configuration: the installations seen most
// recently keep their own label, up to counters.installations of them, and
// the others are counted under OtherInstallation. An installation unseen
// for counters.idle gives its place up. The verdict span itself always
// carries the installation, in its resource: the per-installation detail
// stays in the traces and the verdict file.
// docs/decisions/0223-bounded-verdict-counter-labels.md says why.

// Installation label values beside real installation IDs.
const (
	// OtherInstallation counts the turns of installations beyond the budget.
	OtherInstallation = "other"
	// NoInstallation counts turns whose phone reported no installation.
	NoInstallation = "unknown"
)

// labelBudget remembers the installations that have a label of their own,
// most recently seen first. It is used under the processor's lock.
type labelBudget struct {
	max   int
	idle  time.Duration
	order *list.List // of *labelled, most recent first
	by    map[string]*list.Element
}

type labelled struct {
	id   string
	seen time.Time
}

func newLabelBudget(max int, idle time.Duration) *labelBudget {
	return &labelBudget{max: max, idle: idle, order: list.New(), by: map[string]*list.Element{}}
}

// label is the installation label a turn of id gets now.
func (b *labelBudget) label(id string, now time.Time) string {
	if b.max <= 0 {
		return "" // the fleet setting: no installation on the counted events
	}
	if id == "" {
		return NoInstallation
	}
	if e, ok := b.by[id]; ok {
		e.Value.(*labelled).seen = now
		b.order.MoveToFront(e)
		return id
	}
	if b.order.Len() >= b.max {
		last := b.order.Back()
		if now.Sub(last.Value.(*labelled).seen) < b.idle {
			return OtherInstallation
		}
		b.order.Remove(last)
		delete(b.by, last.Value.(*labelled).id)
	}
	b.by[id] = b.order.PushFront(&labelled{id: id, seen: now})
	return id
}

// installationOf reads app.installation.id from a resource.
func installationOf(res pcommon.Resource) string {
	if v, ok := res.Attributes().Get(semconv.AppInstallationID); ok && v.Type() == pcommon.ValueTypeStr {
		return v.Str()
	}
	return ""
}
