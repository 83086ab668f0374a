package linesconnector

import (
	"crypto/sha256"
	"encoding/hex"
	"sort"
	"strconv"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"

	"github.com/percause/percause/exporters/textlines"
	"github.com/percause/percause/instr/semconv"
)

// Launches: the rules that read across turns (pool, state) read a launch's
// turns, and a launch is the phone's service.instance.id. An app's lines
// seldom carry one, so the connector gives each turn line without one the
// launch it belongs to, from what the lines say:
//
//   - lines of one source (the same resource, and the same process ID when
//     an os_log or syslog prefix names one) are one phone;
//   - in time order (the line's own time, else the order the lines came
//     in), a new launch begins where the turn index goes back or app_uptime
//     drops, or where two timed turns with app_uptime place the launch's
//     start apart by more than launchStartSlack.
//
// A turn is placed between the turns of its source already seen, before and
// after it in time, so lines that arrive out of order (rotated files read
// in either order) still find the launch they belong to. The launch's ID is
// made from the source and the first of its turns the connector saw, as a
// UUID, so the same turn read again finds the same launch.

// launchStartSlack bounds how far apart two turns of one launch may place
// its start (the line's time less its app_uptime): the app's clock for its
// uptime and the log's clock for the line's time drift apart a little, and
// the uptime is printed with two decimals.
const launchStartSlack = 2 * time.Second

// launchTurn is one turn line's place in its source.
type launchTurn struct {
	source    string
	trace     pcommon.TraceID // the turn's trace as first made (the same line read again makes it again)
	at        time.Time
	seq       uint64 // the order lines came in: breaks ties of at (lines without a time of their own)
	timed     bool   // at is the line's own time
	index     int
	hasIndex  bool
	uptime    float64
	hasUptime bool
	launch    string
	slot      int // in launches.ring
}

// launches remembers the recent turn lines of each source, at most cap.
type launches struct {
	bySource map[string][]*launchTurn // sorted by (at, seq)
	byTrace  map[pcommon.TraceID]*launchTurn
	ring     []*launchTurn // in the order they came, the oldest forgotten first
	next     int
	seq      uint64
}

func newLaunches(n int) *launches {
	return &launches{bySource: map[string][]*launchTurn{}, byTrace: map[pcommon.TraceID]*launchTurn{}, ring: make([]*launchTurn, n)}
}

// launchOf gives a turn line that carries no launch its launch's ID; "" when
// the line's resource names its launch itself.
func (ls *launches) launchOf(l *line, trace pcommon.TraceID) string {
	if _, ok := l.resource.Attributes().Get(semconv.ServiceInstanceID); ok {
		return ""
	}
	if e, ok := ls.byTrace[trace]; ok {
		return e.launch
	}
	t := &l.rec.Turn
	ls.seq++
	e := &launchTurn{source: sourceOf(l), trace: trace, at: l.at, seq: ls.seq, timed: l.timed,
		index: t.Index, hasIndex: l.rec.Present.Has(textlines.FTurn),
		uptime: t.AppUptime, hasUptime: l.rec.Present.Has(textlines.FAppUptime)}
	list := ls.bySource[e.source]
	pos := sort.Search(len(list), func(i int) bool { return !list[i].before(e) })
	switch {
	case pos > 0 && sameLaunch(list[pos-1], e):
		e.launch = list[pos-1].launch
	case pos < len(list) && sameLaunch(e, list[pos]):
		e.launch = list[pos].launch
	default:
		e.launch = launchID(e.source, trace)
	}
	list = append(list, nil)
	copy(list[pos+1:], list[pos:])
	list[pos] = e
	ls.bySource[e.source] = list
	ls.byTrace[trace] = e
	ls.remember(e)
	return e.launch
}

// before orders turns by their time, then by the order they came in.
func (e *launchTurn) before(o *launchTurn) bool {
	if !e.at.Equal(o.at) {
		return e.at.Before(o.at)
	}
	return e.seq < o.seq
}

// sameLaunch says whether b, the next turn of the source after a in time,
// is of a's launch.
func sameLaunch(a, b *launchTurn) bool {
	if a.hasIndex && b.hasIndex && b.index <= a.index {
		return false // the turn index went back
	}
	if a.hasUptime && b.hasUptime {
		if b.uptime < a.uptime {
			return false // app_uptime dropped
		}
		if a.timed && b.timed {
			start := func(e *launchTurn) time.Time { return e.at.Add(-time.Duration(e.uptime * float64(time.Second))) }
			if d := start(b).Sub(start(a)); d > launchStartSlack || d < -launchStartSlack {
				return false // relaunched in between
			}
		}
	}
	return true
}

// remember keeps e in the ring, forgetting the oldest turn when it is full.
func (ls *launches) remember(e *launchTurn) {
	if old := ls.ring[ls.next]; old != nil {
		ls.forget(old)
	}
	e.slot = ls.next
	ls.ring[ls.next] = e
	ls.next = (ls.next + 1) % len(ls.ring)
}

// forget removes e. Its source's list is sorted and e is found by search;
// the oldest turn, the one the ring forgets in a day read in order, is
// dropped from the front without a copy.
func (ls *launches) forget(e *launchTurn) {
	if ls.byTrace[e.trace] == e {
		delete(ls.byTrace, e.trace)
	}
	list := ls.bySource[e.source]
	i := sort.Search(len(list), func(i int) bool { return !list[i].before(e) })
	switch {
	case i == len(list) || list[i] != e:
		// not there (cannot happen: every turn remembered is in its list)
	case i == 0:
		list[0] = nil
		list = list[1:]
	default:
		copy(list[i:], list[i+1:])
		list[len(list)-1] = nil
		list = list[:len(list)-1]
	}
	if len(list) == 0 {
		delete(ls.bySource, e.source)
	} else {
		ls.bySource[e.source] = list
	}
	ls.ring[e.slot] = nil
}

// sourceOf names the phone a line came from: its resource's attributes,
// and the process ID its prefix names.
func sourceOf(l *line) string {
	attrs := l.resource.Attributes()
	keys := make([]string, 0, attrs.Len())
	attrs.Range(func(k string, _ pcommon.Value) bool {
		keys = append(keys, k)
		return true
	})
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		v, _ := attrs.Get(k)
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(v.AsString()))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:12]) + "/" + strconv.Itoa(l.rec.PID)
}

// launchID is the UUID (version 8: made here, from a hash) of the launch
// whose first turn seen is trace.
func launchID(source string, trace pcommon.TraceID) string {
	h := sha256.New()
	h.Write([]byte("percause.lines/launch\x00"))
	h.Write([]byte(source))
	h.Write(trace[:])
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x80 // version 8
	u[8] = u[8]&0x3f | 0x80 // the RFC 9562 variant
	b := hex.EncodeToString(u[:])
	return b[:8] + "-" + b[8:12] + "-" + b[12:16] + "-" + b[16:20] + "-" + b[20:]
}
