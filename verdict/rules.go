package verdict

import (
	"time"

	"github.com/percause/percause/instr/semconv"
)

// Rules holds the thresholds of the rules (docs/domain.md): configuration,
// with defaults declared once in instr/semconv, which the dashboards draw
// with too.
type Rules struct {
	// LateLead: a unit lead below -LateLead is a wait (her words were late).
	LateLead time.Duration `mapstructure:"late_lead"`
	// MicOpenLimit: a microphone open longer than this is a wait.
	MicOpenLimit time.Duration `mapstructure:"mic_open_limit"`
	// RisingTurns: a live count rising on each of this many last turns of
	// the launch is state held by the process (1 to semconv.LiveHistory).
	RisingTurns int `mapstructure:"rising_turns"`
}

// DefaultRules are the thresholds docs/domain.md gives.
func DefaultRules() Rules {
	return Rules{
		LateLead:     semconv.DefaultLateLead,
		MicOpenLimit: semconv.DefaultMicOpenLimit,
		RisingTurns:  semconv.DefaultRisingTurns,
	}
}
