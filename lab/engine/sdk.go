package engine

import (
	"context"

	"github.com/percause/percause/instr"
)

// SDKTakes records the engine's takes with the SDK: one tts.take span each,
// continuing the phone's trace, with first byte, total, rate, need and
// beside computed by the SDK from the engine's own production marks.
func SDKTakes(sdk *instr.SDK) TakeRecorder { return sdkTakes{sdk} }

type sdkTakes struct{ sdk *instr.SDK }

func (s sdkTakes) StartTake(ctx context.Context, id string) TakeSpan {
	_, t := s.sdk.StartTake(ctx, id)
	return sdkTake{t}
}

// sdkTake adapts *instr.Take. A mark the SDK refuses is counted in
// percause.sdk.rejected and handed to the SDK's error handler; the engine
// keeps making audio.
type sdkTake struct{ t *instr.Take }

func (s sdkTake) FirstByte()         { s.t.FirstByte() }
func (s sdkTake) Progress(a float64) { s.t.Progress(a) }
func (s sdkTake) End(audio float64)  { s.t.End(audio) }
