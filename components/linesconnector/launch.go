package linesconnector

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
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
// launch it belongs to, from what the lines say
// (docs/decisions/0249-launch-boundaries-from-evidence-that-holds.md):
//
//   - lines of one source (the same resource, and the same process ID when
//     an os_log or syslog prefix names one) are one phone, and two
//     processes are two launches;
//   - in time order (the line's own time, else the order the lines came
//     in), a new launch begins where the turn index goes back, app_uptime
//     drops or device_uptime drops (a reboot), and nowhere else.
//
// The launch's start (the line's time less its app_uptime) is no boundary
// by itself: iOS does not count sleep in uptime, so a phone asleep between
// two turns places its launch's start later at every turn. Where it moves
// later by more than launchStartSlack and the turn index goes on by one,
// the turns are one launch. Where it moves so and turns are missing
// between them (the index skips, or is not printed), the lines cannot tell
// a relaunch whose first turns are not in the files from a phone asleep;
// a new launch is assumed (so rotated files read newest first still find
// their launches), and the turn it begins with says so
// (percause.lines.assumed, which the verdict's evidence repeats), unless
// device_uptime less app_uptime (the device's uptime when the app
// launched, which a sleep leaves alone) says it is one launch.
//
// A turn is placed between the turns of its source already seen, before and
// after it in time, so lines that arrive out of order (rotated files read
// in either order) still find the launch they belong to. The launch's ID is
// made from the source and the first of its turns the connector saw, as a
// UUID, so the same turn read again finds the same launch.

// launchStartSlack bounds how far apart two turns of one launch may place
// its start (the line's time less its app_uptime) before the turn says what
// was assumed: the app's clock for its uptime and the log's clock for the
// line's time drift apart a little, and the uptime is printed with two
// decimals.
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
	device    float64 // device_uptime
	hasDevice bool
	launch    string
	slot      int // in launches.ring
}

// launchAssigner gives a turn line that names no launch its launch's ID
// (the processor's launches.Book is another thing: the history of launches
// it decides on). It remembers the recent turn lines of each source, at most cap.
type launchAssigner struct {
	bySource map[string][]*launchTurn // sorted by (at, seq)
	byTrace  map[pcommon.TraceID]*launchTurn
	ring     []*launchTurn // in the order they came, the oldest forgotten first
	next     int
	seq      uint64
}

func newLaunchAssigner(n int) *launchAssigner {
	return &launchAssigner{bySource: map[string][]*launchTurn{}, byTrace: map[pcommon.TraceID]*launchTurn{}, ring: make([]*launchTurn, n)}
}

// launchOf gives a turn line that carries no launch its launch's ID ("" when
// the line's resource names its launch itself), and what was assumed in
// giving it ("" when the evidence held).
func (ls *launchAssigner) launchOf(l *line, trace pcommon.TraceID) (launch, assumed string) {
	if _, ok := l.resource.Attributes().Get(semconv.ServiceInstanceID); ok {
		return "", ""
	}
	if e, ok := ls.byTrace[trace]; ok {
		return e.launch, ""
	}
	e := ls.turnOf(l, trace)
	list := ls.bySource[e.source]
	pos := sort.Search(len(list), func(i int) bool { return !list[i].before(e) })
	var after, before boundary
	if pos > 0 {
		after = boundaryBetween(list[pos-1], e)
	}
	if pos < len(list) {
		before = boundaryBetween(e, list[pos])
	}
	switch {
	case pos > 0 && !after.begins:
		e.launch = list[pos-1].launch
	case pos < len(list) && !before.begins:
		e.launch = list[pos].launch
	default:
		e.launch = launchID(e.source, trace)
		// Said by the turn a launch was assumed to begin with, when it is
		// this one; a turn placed before one already emitted cannot say it
		// for that one.
		assumed = after.assumed
	}
	ls.insert(e, pos)
	return e.launch, assumed
}

// place puts a turn line read back from storage (the connector's held
// lines) in its source under the launch it was given before, so the lines
// that follow find it.
func (ls *launchAssigner) place(l *line, trace pcommon.TraceID) {
	if _, ok := ls.byTrace[trace]; ok {
		return
	}
	e := ls.turnOf(l, trace)
	e.launch = l.launch
	list := ls.bySource[e.source]
	ls.insert(e, sort.Search(len(list), func(i int) bool { return !list[i].before(e) }))
}

// turnOf is a turn line's place, not yet in its source.
func (ls *launchAssigner) turnOf(l *line, trace pcommon.TraceID) *launchTurn {
	t := &l.rec.Turn
	ls.seq++
	return &launchTurn{source: sourceOf(l), trace: trace, at: l.at, seq: ls.seq, timed: l.timed,
		index: t.Index, hasIndex: l.rec.Present.Has(textlines.FTurn),
		uptime: t.AppUptime, hasUptime: l.rec.Present.Has(textlines.FAppUptime),
		device: t.DeviceUptime, hasDevice: l.rec.Present.Has(textlines.FDeviceUptime)}
}

// insert puts e at pos of its source's turns.
func (ls *launchAssigner) insert(e *launchTurn, pos int) {
	list := append(ls.bySource[e.source], nil)
	copy(list[pos+1:], list[pos:])
	list[pos] = e
	ls.bySource[e.source] = list
	ls.byTrace[e.trace] = e
	ls.remember(e)
}

// before orders turns by their time, then by the order they came in.
func (e *launchTurn) before(o *launchTurn) bool {
	if !e.at.Equal(o.at) {
		return e.at.Before(o.at)
	}
	return e.seq < o.seq
}

// boundary is what two turns of a source, next to each other in time, say
// of a launch beginning between them.
type boundary struct {
	begins bool
	// assumed says so when only the launch's start moving said it (a
	// relaunch assumed); "" when the evidence holds.
	assumed string
}

// boundaryBetween says whether a launch begins between a and b, the next
// turn of the source after a in time.
func boundaryBetween(a, b *launchTurn) boundary {
	switch {
	case a.hasIndex && b.hasIndex && b.index <= a.index:
		return boundary{begins: true} // the turn index went back
	case a.hasUptime && b.hasUptime && b.uptime < a.uptime:
		return boundary{begins: true} // app_uptime dropped
	case a.hasDevice && b.hasDevice && b.device < a.device:
		return boundary{begins: true} // device_uptime dropped: a reboot
	case !a.hasUptime || !b.hasUptime || !a.timed || !b.timed:
		return boundary{}
	case a.hasIndex && b.hasIndex && b.index == a.index+1:
		return boundary{} // the next turn: asleep between them, if the start moved
	case a.hasDevice && b.hasDevice && math.Abs((b.device-b.uptime)-(a.device-a.uptime)) <= launchStartSlack.Seconds():
		// Launched at the same device uptime: the device's uptime and the
		// app's stop alike while the phone sleeps, so this holds across a
		// sleep, and a relaunch would move it.
		return boundary{}
	}
	wall := b.at.Sub(a.at).Seconds()
	grew := b.uptime - a.uptime
	if time.Duration((wall-grew)*float64(time.Second)) <= launchStartSlack {
		return boundary{} // the start moved earlier, if at all: no relaunch does that
	}
	missing := "turns missing between them"
	if a.hasIndex && b.hasIndex {
		missing = fmt.Sprintf("turn %d not in the lines", a.index+1)
		if b.index > a.index+2 {
			missing = fmt.Sprintf("turns %d to %d not in the lines", a.index+1, b.index-1)
		}
	}
	return boundary{begins: true, assumed: fmt.Sprintf(
		"assumed a new launch between %s and %s: app_uptime grew %.2f s in %.2f s of the log's time with %s (a relaunch, or asleep?)",
		turnName(a), turnName(b), grew, wall, missing)}
}

// turnName names a turn in what was assumed: by its index, else its time.
func turnName(e *launchTurn) string {
	if e.hasIndex {
		return "turn " + strconv.Itoa(e.index)
	}
	return "the turn at " + e.at.UTC().Format(time.RFC3339)
}

// remember keeps e in the ring, forgetting the oldest turn when it is full.
func (ls *launchAssigner) remember(e *launchTurn) {
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
func (ls *launchAssigner) forget(e *launchTurn) {
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
