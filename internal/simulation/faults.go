package simulation

import (
	"math/rand/v2"
	"syscall"
)

// faults decides which file system calls fail. Each call's fate comes
// from the seed and the call's number alone, not from what ran before it,
// so a schedule replays call for call.
type faults struct {
	seed uint64
	// rng decides what a fault does (how much of a write lands).
	rng *rand.Rand
	// perMille is the chance, in thousandths, that a call fails.
	perMille uint64
	// full are windows of calls, [from, to), in which every write, create,
	// rename and sync fails with ENOSPC: a disk that filled, then was
	// freed.
	full [][2]int
	// off: no call fails (the recovery at a schedule's end).
	off bool
}

func (f *faults) at(op int, what string) error {
	if f.off || what == syncDirPebble {
		return nil
	}
	for _, w := range f.full {
		if op >= w[0] && op < w[1] && what != "remove" && what != "truncate" {
			return syscall.ENOSPC
		}
	}
	h := mix(f.seed ^ uint64(op)*0x9E3779B97F4A7C15)
	if h%1000 >= f.perMille {
		return nil
	}
	if (h>>20)%2 == 0 {
		return syscall.ENOSPC
	}
	return syscall.EIO
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}
