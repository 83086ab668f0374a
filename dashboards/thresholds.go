package dashboards

import (
	"fmt"
	"strconv"
	"time"

	"github.com/percause/percause/instr/semconv"
)

// The rules' numbers, as the panels draw and write them. They come from
// instr/semconv's defaults, the same ones the verdict processor, the
// Reconnecting rule and the pool's heal start from; a deployment that
// configures other thresholds should regenerate with its own.
var (
	// lateLeadLine is where the unit lead panel turns red (seconds, negative).
	lateLeadLine = -semconv.DefaultLateLead.Seconds()
	// micOpenLine is where the microphone-open panel turns red (seconds).
	micOpenLine = semconv.DefaultMicOpenLimit.Seconds()
)

// seconds writes a duration as the panels do: "1.5 s", "15 s".
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// reconnectingRule is the Reconnecting rule as a panel or an alert states it.
var reconnectingRule = fmt.Sprintf("the progress check failed %d times in a row, for at least %s, with nothing heard from the engine for %s",
	semconv.DefaultReconnectFailures, seconds(semconv.DefaultReconnectFailingFor), seconds(semconv.DefaultReconnectQuiet))
