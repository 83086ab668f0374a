package instr_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/percause/percause/instr"
	"github.com/percause/percause/instr/semconv"
)

// The phone: one voice turn is one trace. Set up once per launch, record each
// turn's readings, end the turn; the SDK adds the live counts and their
// history, spools the batch on disk and sends it when it can.
func Example_phone() {
	ctx := context.Background()
	// An app keeps one spool folder across launches (for example under its
	// caches folder); the example uses a fresh one and cleans up.
	spoolDir, err := os.MkdirTemp("", "pippa-spool-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(spoolDir)

	sdk, err := instr.Setup(ctx,
		instr.WithServiceName(semconv.ServicePhone),
		instr.WithInstallationID("7d3f0c1e-4a51-4c9b-9a55-5d8a1b2c3d4e"), // made once per install and kept
		instr.WithEndpoint("http://127.0.0.1:4318"),                      // the collector's OTLP/HTTP receiver
		instr.WithSpoolDir(spoolDir),                                     // batches wait here while offline
		instr.WithErrorHandler(func(err error) { log.Print(err) }),       // a refused reading (also counted in percause.sdk.rejected)
	)
	if err != nil {
		log.Fatal(err)
	}

	// Code that makes and lets go of players, streams, … keeps the live
	// counts; every turn report reads them.
	live := sdk.Live()
	live.Add(semconv.LivePlayers, 1)
	defer live.Add(semconv.LivePlayers, -1)

	tctx, turn := sdk.StartTurn(ctx)
	turn.SetLink(semconv.LinkWifi, "")
	turn.SetRoute(instr.Route{
		Inputs: []string{semconv.PortBluetoothHFP}, Outputs: []string{semconv.PortBluetoothA2DP},
		SampleRate: 16000, Category: "play_and_record", Mode: "voice_chat",
	})
	turn.SetListen(instr.Listen{Grant: 0.2, Session: 0.3, Total: 0.6})
	turn.SetSpeechEndToPost(0.8)

	// Every call of the turn carries its traceparent, so the engine's takes
	// land in the same trace.
	req, _ := http.NewRequestWithContext(tctx, http.MethodPost, "http://engine.example/api/tts/prepare", nil)
	instr.Inject(tctx, req.Header)

	start := time.Now()
	// … the unit plays …
	turn.Unit(instr.Unit{Index: 1, TakeID: "t1", Gap: 0.12, Lead: 0.3, Cushion: 1.5,
		Player: "queue", Start: start, End: time.Now()}) // bad input is refused, never a panic
	turn.MarkStutter() // when the listener says it broke up
	turn.End()
	fmt.Println("turn", turn.Index(), "recorded")

	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = sdk.Shutdown(sctx) // what the collector has not accepted stays in the spool for the next launch
	// Output: turn 1 recorded
}

// The engine: a take continues the phone's trace from the request, reports
// its first byte and its progress as it synthesises, and ends with the audio
// made; the SDK derives rate, need and beside.
func Example_engine() {
	ctx := context.Background()
	sdk, err := instr.Setup(ctx,
		instr.WithServiceName(semconv.ServiceEngine),
		instr.WithEndpoint("http://127.0.0.1:4318"),
	)
	if err != nil {
		log.Fatal(err)
	}

	stream := func(w http.ResponseWriter, r *http.Request) {
		ctx := instr.Extract(r.Context(), r.Header) // the phone's traceparent
		_, take := sdk.StartTake(ctx, r.URL.Query().Get("take"))
		produced := 0.0
		for i, chunk := range [][]byte{make([]byte, 3200), make([]byte, 3200)} { // synthesised audio
			if i == 0 {
				take.FirstByte()
			}
			_, _ = w.Write(chunk)
			produced += 0.1 // audio seconds in this chunk
			take.Progress(produced)
		}
		take.End(produced)
	}

	rec := httptest.NewRecorder()
	stream(rec, httptest.NewRequest(http.MethodGet, "/api/tts/stream?take=t1", nil))
	fmt.Println(rec.Code, rec.Body.Len(), "bytes")

	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	_ = sdk.Shutdown(sctx)
	// Output: 200 6400 bytes
}
