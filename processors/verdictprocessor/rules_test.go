package verdictprocessor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/percause/percause/instr/semconv"
	"github.com/percause/percause/verdict"
)

// -update rewrites the golden files under testdata/rules from the cases below:
// the input batches (one OTLP JSON batch per line) and the verdict spans out.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// step is one thing that happens to the processor in a case.
type step struct {
	batch    *ptrace.Traces
	advance  time.Duration
	shutdown bool
}

func in(spans ...sp) step { return inTrace(1, spans...) }

func inTrace(n byte, spans ...sp) step {
	td := build(n, withUnitCount(spans)...)
	return step{batch: &td}
}

// withUnitCount gives each voice.turn the unit count the Go SDK always
// reports (pippa.turn.units: the units of its trace in the same batch),
// unless the case sets one or marks the turn as a client's that says none.
func withUnitCount(spans []sp) []sp {
	out := append([]sp(nil), spans...)
	for i, s := range out {
		if s.name != semconv.SpanVoiceTurn || s.noUnits {
			continue
		}
		if _, set := s.attrs[semconv.TurnUnits]; set {
			continue
		}
		seen := map[byte]bool{} // a span sent twice is one unit
		for _, u := range out {
			if u.name == semconv.SpanVoiceUnit && u.trace == s.trace {
				seen[u.id] = true
			}
		}
		out[i].attrs = merge(s.attrs, map[string]any{semconv.TurnUnits: int64(len(seen))})
	}
	return out
}

// noUnits marks a turn as sent by a client that does not say how many
// units it read.
func noUnits(s sp) sp { s.noUnits = true; return s }

func after(d time.Duration) step { return step{advance: d} }

func atShutdown() step { return step{shutdown: true} }

// want is one expected verdict, in the order verdicts are emitted.
type want struct {
	trace    byte // 0: trace 1
	cause    string
	causes   []string
	evidence string // the whole evidence sentence; "" to skip
	contains []string
	forced   string
}

type ruleCase struct {
	name    string
	cfg     func(*Config)
	steps   []step
	want    []want
	dropped map[string]int64
	forced  map[string]int64
}

func cs(c ...string) []string { return c }

func ruleCases() []ruleCase {
	routeChange := func(at float64) ev {
		return ev{semconv.EventRouteChange, map[string]any{
			semconv.RouteChangeAt:     at,
			semconv.RouteChangeReason: "new_device_available",
			semconv.RouteOutputs:      []any{"bluetooth_a2dp"},
		}}
	}
	bt := map[string]any{semconv.RouteOutputs: []any{"bluetooth_a2dp"}, semconv.RouteBluetooth: true}
	return []ruleCase{
		// Rule 1: network / synthesis.
		{
			name:  "network_underrun",
			steps: []step{in(take("t1", 0.4, nil), unit(0, nil), underrun(1, 2, 1.4, nil), turn(map[string]any{semconv.TurnUnits: int64(2)}))},
			want: []want{{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork),
				evidence: "unit 1: 2 underruns, 1.40 s silent; take t1 need 0.40 s ≤ cushion 1.50 s"}},
		},
		{
			name:  "synthesis_underrun",
			steps: []step{in(take("t3", 2.1, nil), underrun(3, 2, 1.4, nil), turn(nil))},
			want: []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis),
				evidence: "unit 3: 2 underruns, 1.40 s silent; take t3 need 2.10 s > cushion 1.50 s"}},
		},
		{
			// At the threshold: a need equal to the cushion is the network's.
			name:  "need_equals_cushion",
			steps: []step{in(take("t1", 1.5, nil), underrun(1, 1, 0.3, nil), turn(nil))},
			want:  []want{{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork), contains: []string{"need 1.50 s ≤ cushion 1.50 s"}}},
		},
		{
			name:  "need_just_above_cushion",
			steps: []step{in(take("t1", 1.51, nil), underrun(1, 1, 0.3, nil), turn(nil))},
			want:  []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis)}},
		},
		{
			name:  "no_underrun_none",
			steps: []step{in(take("t1", 3.0, nil), unit(1, nil), unit(2, nil), turn(map[string]any{semconv.PoolResets: int64(0), semconv.PoolResetsBefore: int64(0)}))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone), evidence: "no rule fired: 2 units, 0 underruns; not reported: live counts"}},
		},
		{
			// The take an underrun is read against never comes: decided after
			// the wait, unknown, saying which take is missing.
			name:  "missing_take",
			steps: []step{in(underrun(2, 1, 0.8, nil), turn(nil)), after(4 * time.Second), after(time.Second)},
			want: []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedWait,
				evidence: "forced after waiting 5s: missing take t2; unit 2: 1 underrun, 0.80 s silent; take t2 never arrived"}},
			forced: map[string]int64{verdict.ForcedWait: 1},
		},
		{
			// The take arrives after the turn, within the wait.
			name:  "take_after_turn",
			steps: []step{in(underrun(1, 1, 0.8, nil), turn(nil)), after(2 * time.Second), in(take("t1", 2.0, nil))},
			want:  []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis)}},
		},
		{
			// The engine exports first (the phone defers while the voice lane
			// is busy): takes wait for their turn.
			name:  "takes_before_turn",
			steps: []step{in(take("t1", 0.2, nil)), after(30 * time.Second), in(underrun(1, 3, 2.0, nil), turn(nil))},
			want:  []want{{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork)}},
		},
		{
			// The turn says it read 3 units; the third comes in a later batch.
			name: "units_after_turn",
			steps: []step{
				in(take("t3", 2.5, nil), unit(1, nil), unit(2, nil), turn(map[string]any{semconv.TurnUnits: int64(3)})),
				in(underrun(3, 1, 1.1, nil)),
			},
			want: []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis)}},
		},

		{
			// The turn says it read 3 units; one never comes.
			name:  "units_missing",
			steps: []step{in(unit(1, nil), unit(2, nil), turn(map[string]any{semconv.TurnUnits: int64(3)})), after(5 * time.Second)},
			want: []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone), forced: verdict.ForcedWait,
				evidence: "forced after waiting 5s: 2 of 3 units arrived; no rule fired: 2 units, 0 underruns; not reported: pippa.pool.resets, live counts"}},
			forced: map[string]int64{verdict.ForcedWait: 1},
		},

		// Rule 2: Bluetooth.
		{
			name:  "bluetooth_stutter",
			steps: []step{in(unit(1, nil), turn(merge(bt, map[string]any{semconv.TurnStutter: true})))},
			want:  []want{{cause: semconv.CauseBluetooth, causes: cs(semconv.CauseBluetooth), evidence: "stutter with 0 underruns on bluetooth_a2dp"}},
		},
		{
			name:  "stutter_on_speaker",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.TurnStutter: true, semconv.RouteOutputs: []any{"builtin_speaker"}}))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// A stutter with underruns is read by rule 1, not as the radio.
			name:  "stutter_with_underruns_on_bluetooth",
			steps: []step{in(take("t1", 0.1, nil), underrun(1, 1, 0.5, nil), turn(merge(bt, map[string]any{semconv.TurnStutter: true})))},
			want:  []want{{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork)}},
		},
		{
			name:  "route_change_on_underran_turn",
			steps: []step{in(take("t1", 0.1, nil), underrun(1, 1, 0.5, nil), turn(nil, routeChange(3.2)))},
			want: []want{{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork, semconv.CauseBluetooth),
				contains: []string{"route change at 3.20 s (new_device_available) on a turn that underran"}}},
		},
		{
			name:  "route_change_on_clean_turn",
			steps: []step{in(unit(1, nil), turn(nil, routeChange(3.2)))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// A route change before she began reading is not "while she reads".
			name:  "route_change_before_reading",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.TurnStutter: true}, routeChange(-1)))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},

		// Rule 3: accumulated state.
		{
			name: "state_rising",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.LiveAttr(semconv.LivePlayers): int64(5), semconv.LiveBeforeAttr(semconv.LivePlayers): []any{int64(2), int64(3), int64(4)},
				semconv.LiveAttr(semconv.LiveTakes): int64(1), semconv.LiveBeforeAttr(semconv.LiveTakes): []any{int64(1), int64(1), int64(1)},
			}))},
			want: []want{{cause: semconv.CauseState, causes: cs(semconv.CauseState), evidence: "players 2→3→4→5 rose on each of the last 3 turns"}},
		},
		{
			// Rose on 2 of the last 3 turns: under the threshold.
			name: "state_rising_twice",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.LiveAttr(semconv.LivePlayers): int64(5), semconv.LiveBeforeAttr(semconv.LivePlayers): []any{int64(3), int64(3), int64(4)},
			}))},
			want: []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// A launch's third turn carries only 2 earlier counts.
			name: "state_short_history",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.LiveAttr(semconv.LiveMicEngines): int64(3), semconv.LiveBeforeAttr(semconv.LiveMicEngines): []any{int64(1), int64(2)},
			}))},
			want: []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			name: "state_rising_threshold_two",
			cfg:  func(c *Config) { c.Rules.RisingTurns = 2 },
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.LiveAttr(semconv.LiveMicEngines): int64(3), semconv.LiveBeforeAttr(semconv.LiveMicEngines): []any{int64(1), int64(2)},
			}))},
			want: []want{{cause: semconv.CauseState, causes: cs(semconv.CauseState), evidence: "mic_engines 1→2→3 rose on each of the last 2 turns"}},
		},

		// Rule 4: pool healing.
		{
			name:  "pool_moved",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.PoolResets: int64(2), semconv.PoolResetsBefore: int64(1)}))},
			want:  []want{{cause: semconv.CausePool, causes: cs(semconv.CausePool), evidence: "pool_reset moved 1→2 since the previous turn"}},
		},
		{
			name:  "pool_unmoved",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.PoolResets: int64(2), semconv.PoolResetsBefore: int64(2)}))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			name:  "pool_first_turn_above_zero",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.TurnIndex: int64(1), semconv.PoolResets: int64(1)}))},
			want:  []want{{cause: semconv.CausePool, causes: cs(semconv.CausePool), evidence: "pool_reset 1 on the first turn of a launch"}},
		},
		{
			// A relaunch: the last turn of launch 1 had 3 resets, unmoved; the
			// first turn of launch 2 restarts at 0, which is not movement.
			name: "relaunch",
			steps: []step{
				inTrace(1, unit(1, nil), turn(map[string]any{semconv.TurnIndex: int64(7), semconv.PoolResets: int64(3), semconv.PoolResetsBefore: int64(3)})),
				inTrace(2, withLaunch("launch-2", unit(1, nil)), withLaunch("launch-2", turn(map[string]any{semconv.TurnIndex: int64(1), semconv.PoolResets: int64(0)}))),
			},
			want: []want{{trace: 1, cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}, {trace: 2, cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},

		// Rule 5: the wait.
		{
			name:  "wait_late_lead",
			steps: []step{in(unit(1, nil), unit(2, map[string]any{semconv.UnitLead: -0.3}), turn(nil))},
			want:  []want{{cause: semconv.CauseWait, causes: cs(semconv.CauseWait), evidence: "unit 2 queued late: lead -0.30 s < -0.10 s"}},
		},
		{
			name:  "wait_lead_at_threshold",
			steps: []step{in(unit(1, nil), unit(2, map[string]any{semconv.UnitLead: -0.1}), turn(nil))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			name: "wait_mic_open",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.ListenGrant: 1.8, semconv.ListenSession: 0.3, semconv.ListenTotal: 2.1,
			}))},
			want: []want{{cause: semconv.CauseWait, causes: cs(semconv.CauseWait), evidence: "microphone open 2.10 s > 1.50 s, slowest stage grant 1.80 s"}},
		},
		{
			name: "wait_mic_open_at_limit",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.ListenGrant: 0.5, semconv.ListenSession: 1.0, semconv.ListenTotal: 1.5,
			}))},
			want: []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},

		// Mixed causes: the primary as specified.
		{
			// On a turn with underruns, the underrun cause with the most
			// silent seconds: synthesis 1.2 s against network 0.5 + 0.4 s.
			name: "mixed_underruns_by_silence",
			steps: []step{in(
				take("t1", 0.2, nil), take("t2", 2.5, nil), take("t3", 0.3, nil),
				underrun(1, 1, 0.5, nil), underrun(2, 2, 1.2, nil), underrun(3, 1, 0.4, nil),
				turn(map[string]any{semconv.PoolResets: int64(2), semconv.PoolResetsBefore: int64(1)}),
			)},
			want: []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis, semconv.CauseNetwork, semconv.CausePool)}},
		},
		{
			// Without underruns: the first that fired of bluetooth, wait,
			// pool, state.
			name: "mixed_without_underruns",
			steps: []step{in(unit(1, map[string]any{semconv.UnitLead: -0.5}), turn(map[string]any{
				semconv.PoolResets: int64(1), semconv.PoolResetsBefore: int64(0),
				semconv.LiveAttr(semconv.LiveByteStreams): int64(9), semconv.LiveBeforeAttr(semconv.LiveByteStreams): []any{int64(3), int64(5), int64(7)},
			}))},
			want: []want{{cause: semconv.CauseWait, causes: cs(semconv.CauseWait, semconv.CausePool, semconv.CauseState),
				evidence: "unit 1 queued late: lead -0.50 s < -0.10 s; pool_reset moved 0→1 since the previous turn; byte_streams 3→5→7→9 rose on each of the last 3 turns"}},
		},
		{
			name: "mixed_bluetooth_before_pool",
			steps: []step{in(unit(1, nil), turn(merge(bt, map[string]any{
				semconv.TurnStutter: true, semconv.PoolResets: int64(4), semconv.PoolResetsBefore: int64(3),
			})))},
			want: []want{{cause: semconv.CauseBluetooth, causes: cs(semconv.CauseBluetooth, semconv.CausePool)}},
		},

		// Late and duplicate turns.
		{
			// A phone flushing its spool after a day offline: decided like
			// any other turn.
			name:  "late_turn",
			steps: []step{in(late(24*time.Hour, take("t1", 2.0, nil)), late(24*time.Hour, underrun(1, 1, 0.9, nil)), late(24*time.Hour, turn(nil)))},
			want:  []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis)}},
		},
		{
			// At-least-once delivery: the same turn twice yields one verdict.
			name: "duplicate_turn",
			steps: []step{
				in(take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)),
				in(take("t1", 2.0, nil), underrun(1, 1, 0.9, nil), turn(nil)),
			},
			want:    []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis)}},
			dropped: map[string]int64{dropDecided: 3},
		},
		{
			// The same spans twice while the turn is pending.
			name: "duplicate_spans",
			steps: []step{
				in(underrun(1, 1, 0.9, nil), underrun(1, 1, 0.9, nil), turn(nil), turn(nil)),
				in(take("t1", 0.5, nil), take("t1", 0.5, nil)),
			},
			want:    []want{{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork)}},
			dropped: map[string]int64{verdict.DropDuplicateSpan: 3},
		},

		// The pending-trace limits.
		{
			// Three traces wait for takes with room for two: the oldest is
			// decided early and says so; a trace without its turn is dropped.
			name: "pending_count_limit",
			cfg:  func(c *Config) { c.MaxPending = 2 },
			steps: []step{
				inTrace(1, underrun(1, 1, 0.9, nil), turn(nil)),
				inTrace(2, take("t1", 0.3, nil)),
				inTrace(3, underrun(1, 1, 0.9, nil), turn(nil)),
				inTrace(4, underrun(1, 1, 0.9, nil), turn(nil)),
			},
			want: []want{{trace: 1, cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedPendingLimit,
				evidence: "forced by the pending limit (2 traces): missing take t1; unit 1: 1 underrun, 0.90 s silent; take t1 never arrived"}},
			dropped: map[string]int64{dropPendingLimit: 1},
			forced:  map[string]int64{verdict.ForcedPendingLimit: 1},
		},
		{
			// Takes whose turn never comes are dropped at max_age; a turn is
			// forced at its wait.
			name: "pending_age_limit",
			cfg:  func(c *Config) { c.MaxAge = 10 * time.Second },
			steps: []step{
				inTrace(1, take("t1", 0.3, nil)),
				after(5 * time.Second),
				inTrace(2, underrun(1, 1, 0.9, nil), turn(nil)),
				after(5 * time.Second),
			},
			want:    []want{{trace: 2, cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedWait}},
			dropped: map[string]int64{dropNoTurn: 1},
			forced:  map[string]int64{verdict.ForcedWait: 1},
		},
		{
			name:    "pending_at_shutdown",
			steps:   []step{inTrace(1, underrun(1, 1, 0.9, nil), turn(nil)), inTrace(2, take("t9", 1.0, nil)), atShutdown()},
			want:    []want{{trace: 1, cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedShutdown, contains: []string{"forced at shutdown: missing take t1"}}},
			dropped: map[string]int64{dropShutdown: 1},
			forced:  map[string]int64{verdict.ForcedShutdown: 1},
		},

		// Bad input: decided unknown with the reason, or dropped and counted.
		{
			name:  "bad_missing_underruns",
			steps: []step{in(unitWithout(1, semconv.UnitUnderruns), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: unit 1: pippa.unit.underruns missing"}},
		},
		{
			name:  "bad_missing_cushion",
			steps: []step{in(take("t1", 0.3, nil), withoutAttr(underrun(1, 1, 0.9, nil), semconv.UnitCushion), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: unit 1: pippa.unit.cushion missing"}},
		},
		{
			name:  "bad_wrong_type",
			steps: []step{in(unit(1, map[string]any{semconv.UnitUnderruns: "two"}), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: unit 1: pippa.unit.underruns is a str, want an integer"}},
		},
		{
			name:  "bad_wrong_type_turn",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.PoolResets: "3", semconv.TurnStutter: "yes"}))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), contains: []string{"voice.turn: pippa.turn.stutter is a str, want a bool", "voice.turn: pippa.pool.resets is a str, want an integer"}}},
		},
		{
			name:  "bad_nan",
			steps: []step{in(take("t1", 0.3, nil), underrun(1, 1, math.NaN(), nil), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: unit 1: pippa.unit.silent is NaN"}},
		},
		{
			name:  "bad_take_need_nan",
			steps: []step{in(take("t1", math.Inf(1), nil), underrun(1, 1, 0.5, nil), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: take t1: pippa.take.need is +Inf"}},
		},
		{
			name:  "bad_negative_duration",
			steps: []step{in(take("t1", 0.3, nil), underrun(1, 1, 0.5, map[string]any{semconv.UnitCushion: -1.5}), turn(map[string]any{semconv.ListenGrant: -0.2}))},
			want: []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown),
				evidence: "bad input: voice.turn: pippa.listen.grant is a negative duration (-0.20 s); unit 1: pippa.unit.cushion is a negative duration (-1.50 s)"}},
		},
		{
			name:  "bad_negative_count",
			steps: []step{in(unit(1, map[string]any{semconv.UnitUnderruns: int64(-3)}), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: unit 1: pippa.unit.underruns is negative (-3)"}},
		},
		{
			// A unit naming a take that never comes (the engine lost it).
			name:   "bad_unit_names_missing_take",
			steps:  []step{in(take("t1", 0.3, nil), underrun(1, 1, 0.5, map[string]any{semconv.TakeID: "t-lost"}), turn(nil)), after(5 * time.Second)},
			want:   []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), forced: verdict.ForcedWait, contains: []string{"take t-lost never arrived"}}},
			forced: map[string]int64{verdict.ForcedWait: 1},
		},
		{
			name:  "bad_unit_without_take",
			steps: []step{in(withoutAttr(underrun(1, 1, 0.5, nil), semconv.TakeID), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: unit 1: underran but names no take (pippa.take.id)"}},
		},
		{
			name:    "bad_take_without_id",
			steps:   []step{in(withoutAttr(take("t1", 0.3, nil), semconv.TakeID), unit(1, nil), turn(nil))},
			want:    []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
			dropped: map[string]int64{dropTakeWithoutID: 1},
		},
		{
			name:  "bad_two_roots",
			steps: []step{in(unit(1, nil), turn(nil), sp{name: semconv.SpanVoiceTurn, id: 2, attrs: map[string]any{semconv.TurnIndex: int64(3)}})},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: 2 voice.turn spans in one trace"}},
		},
		{
			name:  "bad_pool_counts_down",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.PoolResets: int64(1), semconv.PoolResetsBefore: int64(3)}))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: voice.turn: pippa.pool.resets went down within a launch (3 → 1)"}},
		},
		{
			name: "bad_live_history",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.LiveAttr(semconv.LivePlayers): int64(5), semconv.LiveBeforeAttr(semconv.LivePlayers): []any{int64(2), "three", int64(4)},
			}))},
			want: []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown), evidence: "bad input: voice.turn: pippa.live.players.before[1] is a str, want an integer"}},
		},
		{
			// A bad lead on the unit that underran leaves its underrun
			// readable: unknown for the lead, synthesis still implicated.
			name:  "bad_lead_on_an_underrun",
			steps: []step{in(take("t1", 2.0, nil), underrun(1, 1, 0.5, map[string]any{semconv.UnitLead: "late"}), turn(nil))},
			want: []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown, semconv.CauseSynthesis),
				evidence: "bad input: unit 1: pippa.unit.lead is a str, want a number; unit 1: 1 underrun, 0.50 s silent; take t1 need 2.00 s > cushion 1.50 s"}},
		},
		{
			// Bad input does not hide what the rules could read.
			name:  "bad_input_beside_a_cause",
			steps: []step{in(take("t1", 2.0, nil), underrun(1, 1, 0.5, nil), unit(2, map[string]any{semconv.UnitLead: "late"}), turn(nil))},
			want:  []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown, semconv.CauseSynthesis)}},
		},

		// Each threshold from both sides: the cases above hold a reading at
		// its threshold (not firing); these hold it just past (firing), and
		// the evidence still tells the two numbers apart.
		{
			name:  "need_a_hair_above_cushion",
			steps: []step{in(take("t1", 1.504, nil), underrun(1, 1, 0.3, nil), turn(nil))},
			want: []want{{cause: semconv.CauseSynthesis, causes: cs(semconv.CauseSynthesis),
				evidence: "unit 1: 1 underrun, 0.30 s silent; take t1 need 1.504 s > cushion 1.500 s"}},
		},
		{
			name:  "wait_lead_just_past_threshold",
			steps: []step{in(unit(1, nil), unit(2, map[string]any{semconv.UnitLead: -0.11}), turn(nil))},
			want:  []want{{cause: semconv.CauseWait, causes: cs(semconv.CauseWait), evidence: "unit 2 queued late: lead -0.11 s < -0.10 s"}},
		},
		{
			name: "wait_mic_open_just_over_limit",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.ListenGrant: 0.5, semconv.ListenSession: 1.0, semconv.ListenTotal: 1.501,
			}))},
			want: []want{{cause: semconv.CauseWait, causes: cs(semconv.CauseWait),
				evidence: "microphone open 1.501 s > 1.500 s, slowest stage session 1.00 s"}},
		},
		{
			// Without a reported total, the stages add up to it.
			name: "wait_mic_open_from_stages",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.ListenGrant: 0.9, semconv.ListenSession: 0.7,
			}))},
			want: []want{{cause: semconv.CauseWait, causes: cs(semconv.CauseWait),
				evidence: "microphone open 1.60 s > 1.50 s, slowest stage grant 0.90 s"}},
		},
		{
			// The grant and the session were quick; the rest of the total
			// (the listening socket) was the wait.
			name: "wait_mic_open_outside_the_stages",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.ListenGrant: 0.2, semconv.ListenSession: 0.1, semconv.ListenTotal: 2.3,
			}))},
			want: []want{{cause: semconv.CauseWait, causes: cs(semconv.CauseWait),
				evidence: "microphone open 2.30 s > 1.50 s, most of it outside the grant and the session (2.00 s)"}},
		},
		{
			// The thresholds are configuration: past the defaults, within these.
			name: "wait_custom_thresholds",
			cfg: func(c *Config) {
				c.Rules.LateLead = 250 * time.Millisecond
				c.Rules.MicOpenLimit = 2 * time.Second
			},
			steps: []step{in(unit(1, nil), unit(2, map[string]any{semconv.UnitLead: -0.2}), turn(map[string]any{semconv.ListenTotal: 1.8}))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// A Bluetooth route alone, without a stutter, is no cause.
			name:  "bluetooth_without_stutter",
			steps: []step{in(unit(1, nil), turn(bt))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// A route change the moment she begins reading (at 0 s) on a turn
			// that stuttered on the speaker: the route, not the stream.
			name:  "route_change_at_start_on_stuttered_turn",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.TurnStutter: true, semconv.RouteOutputs: []any{"builtin_speaker"}}, routeChange(0)))},
			want: []want{{cause: semconv.CauseBluetooth, causes: cs(semconv.CauseBluetooth),
				evidence: "route change at 0.00 s (new_device_available) on a turn that stuttered"}},
		},
		{
			// The metric's names under the same prefix are no live count.
			name: "state_metric_names_not_counts",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.LiveKind: semconv.LivePlayers, semconv.MetricLiveObjects: "x",
				semconv.LiveAttr(semconv.LivePlayers): int64(1), semconv.LiveBeforeAttr(semconv.LivePlayers): []any{int64(1), int64(1), int64(1)},
			}))},
			want: []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// Rose on the first two steps, flat on the last: not rising.
			name: "state_flat_last_turn",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.LiveAttr(semconv.LiveAudioQueues): int64(4), semconv.LiveBeforeAttr(semconv.LiveAudioQueues): []any{int64(2), int64(3), int64(4)},
			}))},
			want: []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// A launch's first turn at 0 (no .before): not movement.
			name:  "pool_first_turn_at_zero",
			steps: []step{in(unit(1, nil), turn(map[string]any{semconv.TurnIndex: int64(1), semconv.PoolResets: int64(0)}))},
			want:  []want{{cause: semconv.CauseNone, causes: cs(semconv.CauseNone)}},
		},
		{
			// Every adjacent pair of the order bluetooth, wait, pool, state.
			name:  "mixed_bluetooth_before_wait",
			steps: []step{in(unit(1, map[string]any{semconv.UnitLead: -0.5}), turn(merge(bt, map[string]any{semconv.TurnStutter: true})))},
			want:  []want{{cause: semconv.CauseBluetooth, causes: cs(semconv.CauseBluetooth, semconv.CauseWait)}},
		},
		{
			name: "mixed_pool_before_state",
			steps: []step{in(unit(1, nil), turn(map[string]any{
				semconv.PoolResets: int64(2), semconv.PoolResetsBefore: int64(1),
				semconv.LiveAttr(semconv.LiveTakes): int64(4), semconv.LiveBeforeAttr(semconv.LiveTakes): []any{int64(1), int64(2), int64(3)},
			}))},
			want: []want{{cause: semconv.CausePool, causes: cs(semconv.CausePool, semconv.CauseState)}},
		},
		{
			// Equal silence on the network and on synthesis: the measured
			// order breaks the tie, network first.
			name: "mixed_underruns_tie",
			steps: []step{in(
				take("t1", 0.2, nil), take("t2", 2.5, nil),
				underrun(1, 1, 0.6, nil), underrun(2, 1, 0.6, nil), turn(nil),
			)},
			want: []want{{cause: semconv.CauseNetwork, causes: cs(semconv.CauseNetwork, semconv.CauseSynthesis)}},
		},
		{
			// The missing take's underrun was the longest silence: unknown
			// is the primary, the network still implicated.
			name: "mixed_unknown_most_silent",
			steps: []step{in(
				take("t1", 0.2, nil), underrun(1, 1, 0.3, nil), underrun(2, 2, 1.0, nil),
				turn(map[string]any{semconv.ListenTotal: 2.0}),
			), after(5 * time.Second)},
			want: []want{{cause: semconv.CauseUnknown, causes: cs(semconv.CauseUnknown, semconv.CauseNetwork, semconv.CauseWait), forced: verdict.ForcedWait,
				contains: []string{"take t2 never arrived", "need 0.20 s ≤ cushion 1.50 s", "microphone open 2.00 s > 1.50 s"}}},
			forced: map[string]int64{verdict.ForcedWait: 1},
		},
	}
}

func withLaunch(launch string, s sp) sp { s.launch = launch; return s }

func late(d time.Duration, s sp) sp { s.ago = d; return s }

func withoutAttr(s sp, key string) sp {
	a := merge(s.attrs)
	delete(a, key)
	s.attrs = a
	return s
}

func unitWithout(index int64, key string) sp { return withoutAttr(unit(index, nil), key) }

func TestRules(t *testing.T) {
	for _, tc := range ruleCases() {
		t.Run(tc.name, func(t *testing.T) {
			cfg := createDefaultConfig().(*Config)
			if tc.cfg != nil {
				tc.cfg(cfg)
			}
			if err := cfg.Validate(); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join("testdata", "rules")
			inPath := filepath.Join(dir, tc.name+".in.jsonl")
			outPath := filepath.Join(dir, tc.name+".out.json")

			batches := caseBatches(tc)
			if *update {
				writeBatches(t, inPath, batches)
			}
			// The committed input is the source of truth; the builders only
			// write it.
			batches = readBatches(t, inPath)
			if len(batches) != len(caseBatches(tc)) {
				t.Fatalf("%s has %d batches, the case has %d: run with -update", inPath, len(batches), len(caseBatches(tc)))
			}

			h := newHarness(t, cfg)
			k := 0
			for _, s := range tc.steps {
				switch {
				case s.batch != nil:
					h.deliver(batches[k])
					k++
				case s.shutdown:
					h.shutdown()
				default:
					h.advance(s.advance)
				}
			}

			got := h.verdicts()
			if len(got) != len(tc.want) {
				for _, v := range got {
					t.Logf("verdict: %v", v.Attributes().AsRaw())
				}
				t.Fatalf("%d verdicts, want %d", len(got), len(tc.want))
			}
			for i, w := range tc.want {
				checkVerdict(t, got[i], w)
			}
			var pending int64
			for _, n := range h.counter("otelcol_processor_verdict_pending_turns") {
				pending += n
			}
			if pending != int64(h.p.held.Len()) {
				t.Errorf("pending_turns reads %d, %d traces are held", pending, h.p.held.Len())
			}
			checkCounts(t, "dropped", h.counter("otelcol_processor_verdict_dropped"), tc.dropped)
			checkCounts(t, "forced", h.counter("otelcol_processor_verdict_forced"), tc.forced)
			verdictsByCause := h.counter("otelcol_processor_verdict_verdicts")
			var total int64
			for _, n := range verdictsByCause {
				total += n
			}
			if total != int64(len(tc.want)) {
				t.Errorf("verdicts counted %v, want %d in all", verdictsByCause, len(tc.want))
			}

			out := ptrace.NewTraces()
			for _, td := range h.out {
				td.ResourceSpans().MoveAndAppendTo(out.ResourceSpans())
			}
			compareGolden(t, outPath, marshalIndent(t, out))
		})
	}
}

func checkVerdict(t *testing.T, span ptrace.Span, w want) {
	t.Helper()
	trace := w.trace
	if trace == 0 {
		trace = 1
	}
	if span.TraceID() != traceID(trace) {
		t.Errorf("verdict in trace %v, want %v", span.TraceID(), traceID(trace))
	}
	if span.Name() != semconv.SpanVerdict {
		t.Errorf("span name %q", span.Name())
	}
	if span.ParentSpanID() != spanID(trace, 1) {
		t.Errorf("verdict parent %v, want the voice.turn span %v", span.ParentSpanID(), spanID(trace, 1))
	}
	a := span.Attributes()
	str := func(k string) string {
		v, ok := a.Get(k)
		if !ok {
			t.Errorf("verdict lacks %s", k)
			return ""
		}
		return v.Str()
	}
	if got := str(semconv.VerdictCause); got != w.cause {
		t.Errorf("cause %q, want %q (evidence %q)", got, w.cause, str(semconv.VerdictEvidence))
	}
	var causes []string
	if v, ok := a.Get(semconv.VerdictCauses); ok {
		for _, c := range v.Slice().AsRaw() {
			causes = append(causes, c.(string))
		}
	}
	if !reflect.DeepEqual(causes, w.causes) {
		t.Errorf("causes %v, want %v", causes, w.causes)
	}
	ev := str(semconv.VerdictEvidence)
	if w.evidence != "" && ev != w.evidence {
		t.Errorf("evidence\n got %q\nwant %q", ev, w.evidence)
	}
	for _, c := range w.contains {
		if !strings.Contains(ev, c) {
			t.Errorf("evidence %q lacks %q", ev, c)
		}
	}
	if got := str(semconv.VerdictForced); got != w.forced {
		t.Errorf("forced %q, want %q", got, w.forced)
	}
	if w.forced != "" && !strings.HasPrefix(ev, "forced") {
		t.Errorf("a forced verdict must say so first: %q", ev)
	}
	if got := str(semconv.VerdictRulesVersion); got != semconv.RulesVersion {
		t.Errorf("rules version %q", got)
	}
	// One percause.verdict event with the primary cause, then one
	// percause.implicated event per implicated cause, each with the link;
	// then the percause.underrun events (not counted), each with its unit
	// and the cause it was read as.
	var events []string
	for i := 0; i < span.Events().Len(); i++ {
		e := span.Events().At(i)
		// Every event carries one time, the processor's epoch: the count
		// connector spans its counts over all of a span's events, and the
		// counters add up only while that span is one instant.
		if first := span.Events().At(0).Timestamp(); e.Timestamp() != first {
			t.Errorf("event %s stamped %v, the first event %v: every event of a verdict span carries the epoch", e.Name(), e.Timestamp(), first)
		}
		c, _ := e.Attributes().Get(semconv.VerdictCause)
		if e.Name() == semconv.EventUnderrun {
			if _, ok := e.Attributes().Get(semconv.UnitIndex); !ok || c.Str() == "" {
				t.Errorf("underrun event without its unit or cause: %v", e.Attributes().AsRaw())
			}
			continue
		}
		events = append(events, e.Name()+"="+c.Str())
		if l, ok := e.Attributes().Get(semconv.NetworkConnectionType); !ok || l.Str() == "" {
			t.Errorf("event %s without link", e.Name())
		}
	}
	wantEvents := []string{semconv.SpanVerdict + "=" + w.cause}
	for _, c := range w.causes {
		wantEvents = append(wantEvents, semconv.EventImplicated+"="+c)
	}
	if !reflect.DeepEqual(events, wantEvents) {
		t.Errorf("events %v, want %v", events, wantEvents)
	}
}

func checkCounts(t *testing.T, what string, got, want map[string]int64) {
	t.Helper()
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s{%s} = %d, want %d (all: %v)", what, k, got[k], n, got)
		}
	}
	for k, n := range got {
		if _, ok := want[k]; !ok && n != 0 {
			t.Errorf("unexpected %s{%s} = %d", what, k, n)
		}
	}
}

func caseBatches(tc ruleCase) []ptrace.Traces {
	var out []ptrace.Traces
	for _, s := range tc.steps {
		if s.batch != nil {
			out = append(out, *s.batch)
		}
	}
	return out
}

func writeBatches(t *testing.T, path string, batches []ptrace.Traces) {
	t.Helper()
	var buf bytes.Buffer
	m := ptrace.JSONMarshaler{}
	for _, td := range batches {
		b, err := m.MarshalTraces(td)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readBatches(t testing.TB, path string) []ptrace.Traces {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write the golden input)", err)
	}
	defer f.Close()
	var out []ptrace.Traces
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	u := ptrace.JSONUnmarshaler{}
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		td, err := u.UnmarshalTraces(sc.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, td)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func marshalIndent(t *testing.T, td ptrace.Traces) []byte {
	t.Helper()
	b, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write the golden output)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("verdict spans differ from %s (run with -update after checking):\n%s", path, got)
	}
}

// TestVerdictSpanIDStable: the same turn always yields the same verdict span.
func TestVerdictSpanIDStable(t *testing.T) {
	a := verdict.SpanIDFor(traceID(1), spanID(1, 1))
	if a != verdict.SpanIDFor(traceID(1), spanID(1, 1)) || a.IsEmpty() {
		t.Fatal("verdict span ID not stable")
	}
	if a == verdict.SpanIDFor(traceID(2), spanID(2, 1)) {
		t.Fatal("verdict span IDs of different turns collide")
	}
}

// TestBounds: a hostile turn cannot grow the state or the evidence without
// bound.
func TestBounds(t *testing.T) {
	cfg := createDefaultConfig().(*Config)
	h := newHarness(t, cfg)
	spans := []sp{turn(nil)}
	for i := int64(1); i <= verdict.MaxUnits+10; i++ {
		u := underrun(i, 3, 0.7, map[string]any{semconv.TakeID: "missing-take-with-a-long-name"})
		u.id = 0 // set below: more units than a byte of span ID
		spans = append(spans, u)
	}
	td := build(1, spans[:1]...)
	ss := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i, s := range spans[1:] {
		one := build(1, s)
		span := one.ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0)
		span.SetSpanID(pcommon.SpanID{0xDD, 0, 0, 0, 0, 0, byte(i >> 8), byte(i)})
		span.CopyTo(ss.AppendEmpty())
	}
	h.deliver(td)
	h.advance(cfg.Wait)
	v := h.verdicts()
	if len(v) != 1 {
		t.Fatalf("%d verdicts", len(v))
	}
	ev, _ := v[0].Attributes().Get(semconv.VerdictEvidence)
	if n := len(ev.Str()); n > verdict.MaxEvidence+len("…") {
		t.Errorf("evidence is %d bytes", n)
	}
	if !strings.HasSuffix(ev.Str(), "…") {
		t.Errorf("cut evidence does not say so: %q", ev.Str())
	}
	if got := h.counter("otelcol_processor_verdict_dropped")[verdict.DropUnitLimit]; got != 10 {
		t.Errorf("dropped{unit_limit} = %d, want 10", got)
	}
}
