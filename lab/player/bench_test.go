package player

import "testing"

// BenchmarkPlay replays a 60 s take arriving in 600 chunks with two stalls:
// the model's cost per unit read aloud.
func BenchmarkPlay(b *testing.B) {
	arr, last := steady(0, 0.1, 0.1, 60)
	for i := 200; i < 260; i++ {
		arr[i].At += 3 // a stall
	}
	for i := 260; i < len(arr); i++ {
		arr[i].At += 3
	}
	cfg := DefaultConfig()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Play(cfg, 0, arr, last+3); err != nil {
			b.Fatal(err)
		}
	}
}
