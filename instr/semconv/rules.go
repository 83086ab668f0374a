package semconv

import "time"

// The default numbers of the rules (docs/domain.md, "The numbers in one
// place"): one declaration that every part reads. The verdict processor's
// configuration (rules.late_lead, rules.mic_open_limit, rules.rising_turns)
// starts from the first three; the SDK's Reconnecting rule
// (instr/linkstatus) and the pool's heal (instr/lanes) use the others; and
// the dashboards draw their threshold lines and write their rules' text from
// all of them, so a changed default cannot leave a panel stale.
const (
	// DefaultLateLead: a unit whose lead is below -DefaultLateLead was
	// queued after the previous unit had ended; her words were late (wait).
	DefaultLateLead = 100 * time.Millisecond
	// DefaultMicOpenLimit: a microphone that took longer than this to open
	// is a wait.
	DefaultMicOpenLimit = 1500 * time.Millisecond
	// DefaultRisingTurns: a live count that rose on each of this many last
	// turns of a launch is the process holding something (state). At most
	// LiveHistory, the earlier turns a report carries.
	DefaultRisingTurns = 3

	// DefaultReconnectFailures: "Reconnecting" needs the progress check to
	// have failed this many times in a row; one miss is never enough.
	DefaultReconnectFailures = 2
	// DefaultReconnectFailingFor: … and to have been failing this long,
	// from the first failure of the run.
	DefaultReconnectFailingFor = 6 * time.Second
	// DefaultReconnectQuiet: … with nothing heard from the engine for this
	// long (streamed words and other answers count as hearing from it).
	DefaultReconnectQuiet = 15 * time.Second

	// DefaultPoolResetAfter: a lane heals (pool_reset) after this many of
	// its current session's calls failed in a row.
	DefaultPoolResetAfter = 2
	// DefaultPoolResetSpacing: a lane heals at most once in this long.
	DefaultPoolResetSpacing = 20 * time.Second

	// DefaultPostBudget is the done reading's allowance for a turn's
	// speech-end-to-post (the end-of-speech window plus the upload): the
	// dashboards' Done panel, `percause lines` and the verdict page read
	// the day against it.
	DefaultPostBudget = 3 * time.Second
)
