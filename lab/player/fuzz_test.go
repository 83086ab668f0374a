package player

import (
	"encoding/binary"
	"testing"
)

// FuzzPlay feeds arbitrary arrival schedules to the model: it must never
// panic, and every result it accepts keeps the model's invariants.
func FuzzPlay(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 10, 0, 200, 1, 0, 5, 0, 50})
	f.Add([]byte{1, 0, 255, 0, 0, 0, 0, 0, 3, 3, 3, 3, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		cfg := Config{Cushion: float64(data[0]) / 16, BytesPerSecond: 100 + float64(data[1])}
		data = data[2:]
		var arr []Arrival
		at := 0.0
		// Each arrival: a time step (uint16, in 1/100 s) and a byte count (uint16).
		for len(data) >= 4 {
			at += float64(binary.LittleEndian.Uint16(data)) / 100
			arr = append(arr, Arrival{At: at, N: int(binary.LittleEndian.Uint16(data[2:]))})
			data = data[4:]
		}
		notBefore := 0.0
		if len(data) > 0 {
			notBefore = float64(data[0]) / 10
		}
		res, err := Play(cfg, notBefore, arr, at+0.5)
		if err != nil {
			t.Fatalf("valid schedule refused: %v", err)
		}
		checkInvariants(t, res)
		if res.Start < notBefore {
			t.Fatalf("started at %v before its turn at %v", res.Start, notBefore)
		}
	})
}
