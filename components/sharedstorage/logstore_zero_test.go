package sharedstorage

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestLogZeroTailIsCut: a power loss with fsync off can leave zeros where
// the log's length reached the disk and its data did not. An all-zero
// header reads as an empty record whose checksum (CRC-32C of nothing, 0)
// holds; it is a torn tail like any other: cut off, the keys before it
// kept, and the store opens.
func TestLogZeroTailIsCut(t *testing.T) {
	for _, zeros := range []int{recordHeader, recordHeader + 1, 4096} {
		t.Run(fmt.Sprint(zeros, " zeros"), func(t *testing.T) {
			dir := t.TempDir()
			ctx := context.Background()
			s := openTestLog(t, dir, DefaultCompactAfter)
			for i := range 3 {
				if err := s.Set(ctx, fmt.Sprint("k", i), []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
			closeLog(t, s)
			path := filepath.Join(dir, testLog+".1.log")
			whole, _ := os.Stat(path)
			appendFile(t, path, make([]byte, zeros))

			s, err := openLog(dir, testLog, false, DefaultCompactAfter, nil)
			if err != nil {
				t.Fatalf("a zero-filled tail stops the store from opening: %v", err)
			}
			defer closeLog(t, s)
			if got := held(s); !maps.Equal(got, map[string]string{"k0": "v", "k1": "v", "k2": "v"}) {
				t.Fatalf("after the zeros: %v", got)
			}
			if st, _ := os.Stat(path); st.Size() != whole.Size() {
				t.Fatalf("the log is %d bytes, want it cut back to %d", st.Size(), whole.Size())
			}
			if len(s.cuts) != 1 || s.cuts[0].File != path || s.cuts[0].Bytes != int64(zeros) {
				t.Fatalf("the cut is named %+v, want %s and %d bytes", s.cuts, path, zeros)
			}
		})
	}
}
