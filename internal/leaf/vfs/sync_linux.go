package vfs

import (
	"os"
	"syscall"
)

// datasync flushes f's data, and only the metadata needed to read it back
// (its size), to the disk: an append needs no more, and fdatasync skips
// the inode's times fsync would write too.
func datasync(f *os.File) error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			return err
		}
	}
}
