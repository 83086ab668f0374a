//go:build !unix

package distro

import "os"

// tryLock locks nothing where flock does not exist: bbolt's own lock on
// each database still keeps a second collector out, without naming the
// first.
func tryLock(*os.File) (held bool, err error) { return false, nil }
