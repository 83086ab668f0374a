package spool

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The on-disk format of one batch:
//
//	magic   [4]byte "PCS1"
//	length  uint32  payload length, big endian
//	crc     uint32  CRC-32C (Castagnoli) of the payload, big endian
//	payload [length]byte
const (
	magic      = "PCS1"
	headerSize = 12
	fileSuffix = ".batch"
	tmpPrefix  = ".tmp-"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every decode failure of a spooled file.
var ErrCorrupt = errors.New("spool: corrupt batch file")

func encodeHeader(payload []byte) []byte {
	h := make([]byte, headerSize, headerSize+len(payload))
	copy(h, magic)
	binary.BigEndian.PutUint32(h[4:8], uint32(len(payload)))
	binary.BigEndian.PutUint32(h[8:12], crc32.Checksum(payload, castagnoli))
	return h
}

// decode checks a whole file's bytes and returns its payload.
func decode(b []byte) ([]byte, error) {
	if len(b) < headerSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than the %d-byte header", ErrCorrupt, len(b), headerSize)
	}
	if string(b[:4]) != magic {
		return nil, fmt.Errorf("%w: bad magic %q", ErrCorrupt, b[:4])
	}
	n := binary.BigEndian.Uint32(b[4:8])
	if got := len(b) - headerSize; uint64(got) != uint64(n) {
		return nil, fmt.Errorf("%w: header says %d payload bytes, file has %d", ErrCorrupt, n, got)
	}
	payload := b[headerSize:]
	if sum := crc32.Checksum(payload, castagnoli); sum != binary.BigEndian.Uint32(b[8:12]) {
		return nil, fmt.Errorf("%w: checksum mismatch (crc32c %08x, header %08x)", ErrCorrupt, sum, binary.BigEndian.Uint32(b[8:12]))
	}
	return payload, nil
}

// fileName is <20-digit sequence>.<kind>.batch: lexical order is age order.
func fileName(seq uint64, kind string) string {
	return fmt.Sprintf("%020d.%s%s", seq, kind, fileSuffix)
}

// parseName reads a batch file name; ok is false for anything else.
func parseName(name string) (seq uint64, kind string, ok bool) {
	if !strings.HasSuffix(name, fileSuffix) {
		return 0, "", false
	}
	base := strings.TrimSuffix(name, fileSuffix)
	num, kind, found := strings.Cut(base, ".")
	if !found || len(num) != 20 || !validKind(kind) {
		return 0, "", false
	}
	seq, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, "", false
	}
	return seq, kind, true
}

func validKind(k string) bool {
	if k == "" || len(k) > 32 {
		return false
	}
	for _, r := range k {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
}

// writeDurable writes data to dir/name via a temporary file, fsync and
// rename, then fsyncs dir so the rename itself survives a power cut.
func writeDurable(dir, name string, parts ...[]byte) (err error) {
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	for _, p := range parts {
		if _, err = f.Write(p); err != nil {
			return err
		}
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
