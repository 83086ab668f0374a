//go:build !unix

package spool

import (
	"fmt"
	"os"
	"path/filepath"
)

// lockDir keeps dir/.lock open; without flock, exclusivity is not enforced
// on this platform.
func lockDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	return f, nil
}

func unlockDir(f *os.File) { _ = f.Close() }
