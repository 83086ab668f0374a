package idring

import "testing"

// TestRingHoldsTheLastN: the ring holds exactly its size, the oldest ID
// leaves first, and adding an ID it holds takes no second place.
func TestRingHoldsTheLastN(t *testing.T) {
	r := New[[8]byte](4)
	id := func(n int) [8]byte { return [8]byte{1, byte(n)} }
	for i := 0; i < 10; i++ {
		r.Add(id(i))
		r.Add(id(i))
		if r.Len() > 4 {
			t.Fatalf("after %d adds it holds %d", i+1, r.Len())
		}
	}
	for i := 0; i < 10; i++ {
		if want := i >= 6; r.Has(id(i)) != want {
			t.Errorf("Has(%d) = %v, want %v", i, !want, want)
		}
	}
}
