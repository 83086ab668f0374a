package linkstatus_test

import (
	"fmt"
	"time"

	"github.com/percause/percause/instr/linkstatus"
)

func ExampleReconnecting() {
	// The engine is gone: the progress check has timed out at 5, 13 and 21 s
	// and nothing was heard since the turn began.
	v := linkstatus.Reconnecting(linkstatus.Readings{
		Check: "progress check", Failures: 3, FailingFor: 16 * time.Second, QuietFor: 21 * time.Second,
	}, linkstatus.DefaultThresholds())
	fmt.Println(v.Message)

	// One check missed while her words are still streaming: no verdict.
	v = linkstatus.Reconnecting(linkstatus.Readings{Failures: 1, FailingFor: 5 * time.Second, QuietFor: time.Second}, linkstatus.DefaultThresholds())
	fmt.Println(v.Show, v.Why)
	// Output:
	// Reconnecting: the progress check has failed for 16 s (3 times in a row).
	// false 1 failure(s) in a row, fewer than 2
}

func ExampleDiagnose() {
	// The control lane is full while take bytes keep arriving: this device's
	// congestion, not the engine's absence.
	fmt.Println(linkstatus.Diagnose(linkstatus.Probes{
		Probed: true, DeviceOnline: true, OtherAnswered: true, Lane: "control", InFlight: 6, Limit: 6,
	}))
	// Online, and nothing answers anywhere: the only line with advice.
	fmt.Println(linkstatus.Diagnose(linkstatus.Probes{Probed: true, DeviceOnline: true}))
	// Output:
	// Pippa is answering; this device's control lane is busy (6 of 6 calls open). Waiting for it to clear.
	// Pippa cannot be reached from this device. Check that Tailscale is connected on this device and that the Pippa machine is online in the tailnet.
}
