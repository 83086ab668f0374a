package poolsim

import (
	"container/heap"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/percause/percause/instr/linkstatus"
)

// Defaults of the model (docs/queueing.md).
const (
	DefaultConns        = 6                        // connections per pool, as on the phone
	DefaultHorizon      = 45 * time.Second         // checks are asked while before this
	DefaultCheckAnswer  = 200 * time.Millisecond   // a healthy engine answers a check in this
	DefaultCheckTimeout = 5 * time.Second          // the check's request timeout
	DefaultCheckRest    = 3 * time.Second          // rest after an answer or a timeout
	DefaultStream       = 40400 * time.Millisecond // the turn's line stream
	DefaultBurstAt      = 20 * time.Second         // prepares and the upload
	DefaultTakesAt      = 20400 * time.Millisecond // the take streams
	DefaultPrepare      = 400 * time.Millisecond
	DefaultPrepares     = 4
	DefaultUpload       = 26 * time.Second
)

// DefaultTakes are the reply's take stream lengths.
var DefaultTakes = []time.Duration{14 * time.Second, 19 * time.Second, 24 * time.Second, 30 * time.Second}

// Call kinds of the model; their names order calls that tie on everything else.
const (
	KindStream  = "stream"
	KindCheck   = "check"
	KindPrepare = "prepare"
	KindUpload  = "upload"
	KindTake    = "take"
)

// Case is one run of the model.
type Case struct {
	// TwoPools splits control (stream, prepares, checks) from bulk (takes,
	// upload); false puts every call in one pool.
	TwoPools bool
	// EngineGone means no check is ever answered and no word is heard.
	EngineGone bool
	// Takes are the take stream lengths (nil: DefaultTakes).
	Takes []time.Duration
	// WordsUntil is when her streamed words end; the turn's stream lasts as
	// long. Negative means the default: DefaultStream with the engine up,
	// no words at all when it is gone.
	WordsUntil time.Duration
}

// Reference returns the three reference cases of docs/queueing.md in table
// order.
func Reference() []Case {
	return []Case{
		{TwoPools: false, WordsUntil: -1},
		{TwoPools: true, WordsUntil: -1},
		{TwoPools: true, EngineGone: true, WordsUntil: -1},
	}
}

// Validate reports a case the model cannot run.
func (c Case) Validate() error {
	var errs []error
	for i, d := range c.Takes {
		if d <= 0 {
			errs = append(errs, fmt.Errorf("poolsim: take %d length must be positive, got %s", i+1, d))
		}
	}
	if c.WordsUntil > 24*time.Hour {
		errs = append(errs, fmt.Errorf("poolsim: words-until %s is beyond a day", c.WordsUntil))
	}
	return errors.Join(errs...)
}

// Label names the case the way the reference table does.
func (c Case) Label() string {
	pools := "one pool"
	if c.TwoPools {
		pools = "two pools"
	}
	engine := "a healthy engine"
	if c.EngineGone {
		engine = "the engine gone"
	}
	return pools + ", " + engine
}

// Result is what the model measured for one case.
type Result struct {
	Case   Case
	Checks int
	Missed int
	// FirstMiss is when the first missed check timed out (Never: none).
	FirstMiss time.Duration
	// Verdict is the first missed check's timeout at which Reconnecting
	// holds (Never: it never does within the horizon).
	Verdict time.Duration
	// Calls is every call the model placed, in the order it served them.
	Calls []Placed
}

// Never marks a time that did not happen.
const Never time.Duration = -1

// Placed is one call as the model served it.
type Placed struct {
	Kind    string
	Arrival time.Duration
	Start   time.Duration // Never for a missed check
	Length  time.Duration
	Pool    string // "control", "bulk" or "shared"
	Conn    int    // -1 for a missed check
	Missed  bool
}

// Row renders the result in the reference table's format.
func (r Result) Row() string {
	return fmt.Sprintf("%-29schecks %2d, missed %2d | one miss: %-6s  verdict: %s",
		r.Case.Label(), r.Checks, r.Missed, at(r.FirstMiss), at(r.Verdict))
}

func at(d time.Duration) string {
	if d == Never {
		return "never"
	}
	// Exact to the tenth: the model's times are whole milliseconds.
	tenths := (d + 50*time.Millisecond) / (100 * time.Millisecond)
	return fmt.Sprintf("%2d.%d s", tenths/10, tenths%10)
}

// Table runs the reference cases and returns their rows, one per line.
func Table() string {
	var b strings.Builder
	for _, c := range Reference() {
		r, err := Run(c)
		if err != nil { // the reference cases always validate
			panic(err)
		}
		b.WriteString(r.Row())
		b.WriteByte('\n')
	}
	return b.String()
}

type call struct {
	kind    string
	arrival time.Duration
	length  time.Duration
	bulk    bool
	seq     int // insertion order, the last tie-break (never reached by distinct calls)
}

// less is the service order of docs/queueing.md: arrival time, the turn's stream
// before any other kind, shorter first, then kind name.
func less(a, b *call) bool {
	if a.arrival != b.arrival {
		return a.arrival < b.arrival
	}
	if (a.kind == KindStream) != (b.kind == KindStream) {
		return a.kind == KindStream
	}
	if a.length != b.length {
		return a.length < b.length
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

type queue []*call

func (q queue) Len() int           { return len(q) }
func (q queue) Less(i, j int) bool { return less(q[i], q[j]) }
func (q queue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)        { *q = append(*q, x.(*call)) }
func (q *queue) Pop() any {
	old := *q
	n := len(old)
	c := old[n-1]
	*q = old[:n-1]
	return c
}

type pool struct {
	name string
	free []time.Duration // when each connection frees
}

// take returns the connection that frees first (lowest-numbered among equals).
func (p *pool) take() int {
	best := 0
	for i, f := range p.free {
		if f < p.free[best] {
			best = i
		}
	}
	return best
}

// Run plays one case.
func Run(c Case) (Result, error) {
	if err := c.Validate(); err != nil {
		return Result{}, err
	}
	takes := c.Takes
	if takes == nil {
		takes = DefaultTakes
	}
	words := c.WordsUntil
	if words < 0 {
		words = DefaultStream
		if c.EngineGone {
			words = 0
		}
	}
	res := Result{Case: c, FirstMiss: Never, Verdict: Never}

	control := &pool{name: "shared", free: make([]time.Duration, DefaultConns)}
	bulk := control
	if c.TwoPools {
		control.name = "control"
		bulk = &pool{name: "bulk", free: make([]time.Duration, DefaultConns)}
	}

	q := &queue{}
	seq := 0
	push := func(kind string, arrival, length time.Duration, isBulk bool) {
		seq++
		heap.Push(q, &call{kind: kind, arrival: arrival, length: length, bulk: isBulk, seq: seq})
	}
	if words > 0 {
		push(KindStream, 0, words, false)
	}
	for range DefaultPrepares {
		push(KindPrepare, DefaultBurstAt, DefaultPrepare, false)
	}
	push(KindUpload, DefaultBurstAt, DefaultUpload, true)
	for _, d := range takes {
		push(KindTake, DefaultTakesAt, d, true)
	}
	push(KindCheck, 0, DefaultCheckAnswer, false)

	th := linkstatus.DefaultThresholds()
	var (
		failures     int
		failingSince time.Duration
		lastAnswer   time.Duration // nothing heard before the turn began at 0
	)
	for q.Len() > 0 {
		cl := heap.Pop(q).(*call)
		p := control
		if cl.bulk {
			p = bulk
		}
		conn := p.take()
		start := max(cl.arrival, p.free[conn])
		if cl.kind != KindCheck {
			p.free[conn] = start + cl.length
			res.Calls = append(res.Calls, Placed{Kind: cl.kind, Arrival: cl.arrival, Start: start, Length: cl.length, Pool: p.name, Conn: conn})
			continue
		}
		res.Checks++
		answer := start + cl.length
		var next time.Duration
		if !c.EngineGone && answer <= cl.arrival+DefaultCheckTimeout {
			p.free[conn] = answer
			res.Calls = append(res.Calls, Placed{Kind: cl.kind, Arrival: cl.arrival, Start: start, Length: cl.length, Pool: p.name, Conn: conn})
			failures = 0
			lastAnswer = answer
			next = answer + DefaultCheckRest
		} else {
			timeout := cl.arrival + DefaultCheckTimeout
			res.Missed++
			res.Calls = append(res.Calls, Placed{Kind: cl.kind, Arrival: cl.arrival, Start: Never, Length: cl.length, Pool: p.name, Conn: -1, Missed: true})
			if res.FirstMiss == Never {
				res.FirstMiss = timeout
			}
			if failures == 0 {
				failingSince = timeout
			}
			failures++
			heard := max(lastAnswer, min(timeout, words))
			v := linkstatus.Reconnecting(linkstatus.Readings{
				Check:      linkstatus.DefaultCheck,
				Failures:   failures,
				FailingFor: timeout - failingSince,
				QuietFor:   timeout - heard,
			}, th)
			if v.Show && res.Verdict == Never {
				res.Verdict = timeout
			}
			next = timeout + DefaultCheckRest
		}
		if next < DefaultHorizon {
			push(KindCheck, next, DefaultCheckAnswer, false)
		}
	}
	return res, nil
}
