package sharedstorage

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/extension/xextension/storage"
	"go.uber.org/zap"

	"github.com/percause/percause/components/sharedstorage/internal/metadata"
)

// importedPrefix keys the record, per namespace, that its import from
// file_storage was done: written in the transaction that read the data in
// (or found none), so a namespace a component later emptied is never
// filled again from the old file. '~' sorts after every namespace (they
// start with a kind's lowercase name), so no walk passes these keys.
const importedPrefix = "~imported/"

// namespace is the prefix of kind/id/name's keys: four parts, each in
// file_storage's escaping (no '/' inside a part), each ended by '/', so no
// namespace's prefix is the beginning of another's.
func namespace(kind component.Kind, id component.ID, name string) string {
	var b strings.Builder
	for _, part := range []string{kindString(kind), id.Type().String(), id.Name(), name} {
		b.WriteString(sanitize(part))
		b.WriteByte('/')
	}
	return b.String()
}

// importOnce reads in, at a namespace's first use, what file_storage kept
// for the same kind/id/name in this directory, so a component switched
// from file_storage to shared_storage loses nothing. The old file is
// read, not removed. The caller holds s.mu.
func (s *sharedStorage) importOnce(ctx context.Context, prefix string, kind component.Kind, id component.ID, name string) error {
	marker := storage.GetOperation(importedPrefix + prefix)
	if err := s.db.commit(ctx, metadata.TriggerImport, []*storage.Operation{marker}); err != nil {
		return err
	}
	if marker.Value != nil {
		return nil
	}
	record := "nothing to import (no file_storage database for it)"
	var ops []*storage.Operation
	path, found, err := fileStorageDatabase(s.cfg.Directory, kind, id, name)
	if kind == component.KindExtension && id == s.id && name == "" {
		found = false // that file is the shared database itself
	}
	switch {
	case err != nil:
		return err
	case found:
		empty, err := s.namespaceEmpty(ctx, prefix)
		if err != nil {
			return err
		}
		if !empty {
			record = "not imported from " + path + ": the namespace held keys already"
			break
		}
		ops, err = s.readFileStorage(ctx, kind, id, name)
		if err != nil {
			return fmt.Errorf("reading file_storage's database %s: %w", path, err)
		}
		record = fmt.Sprintf("imported %d keys from %s", len(ops), path)
	}
	ops = append(ops, storage.SetOperation(marker.Key, []byte(time.Now().UTC().Format(time.RFC3339)+" "+record)))
	if err := s.db.commit(ctx, metadata.TriggerImport, ops); err != nil {
		return err
	}
	if n := len(ops) - 1; found && n > 0 {
		s.tel.b.ExtensionSharedStorageImported.Add(ctx, int64(n))
		s.logger.Info("shared_storage: read in what file_storage kept for a client; its file is left as it was",
			zap.String("client", prefix), zap.String("file", path), zap.Int("keys", n))
	}
	return nil
}

// namespaceEmpty reports whether prefix holds no key.
func (s *sharedStorage) namespaceEmpty(ctx context.Context, prefix string) (bool, error) {
	empty := true
	err := s.db.walk(ctx, prefix, func(string, []byte) ([]*storage.Operation, error) {
		empty = false
		return nil, storage.SkipAll
	})
	return empty, err
}

// readFileStorage reads every key of file_storage's database for
// kind/id/name, through file_storage itself (its naming, its bucket), as
// Set operations under the namespace's keys.
func (s *sharedStorage) readFileStorage(ctx context.Context, kind component.Kind, id component.ID, name string) ([]*storage.Operation, error) {
	ops, err := s.readAll(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	return prefixed(namespace(kind, id, name), ops), nil
}

// readAll reads every key of file_storage's database for kind/id/name, as
// Set operations of its own keys, and closes its client.
func (s *sharedStorage) readAll(ctx context.Context, kind component.Kind, id component.ID, name string) ([]*storage.Operation, error) {
	old, err := s.files.GetClient(ctx, kind, id, name)
	if err != nil {
		return nil, err
	}
	w, ok := old.(storage.Walker)
	if !ok {
		_ = old.Close(ctx)
		return nil, errors.New("file_storage's client cannot walk its keys")
	}
	var ops []*storage.Operation
	err = w.Walk(ctx, func(key string, value []byte) ([]*storage.Operation, error) {
		ops = append(ops, storage.SetOperation(key, append([]byte(nil), value...)))
		return nil, nil
	})
	if err = errors.Join(err, old.Close(ctx)); err != nil {
		return nil, err
	}
	return ops, nil
}

// fileStorageDatabase is the file file_storage keeps kind/id/name's data
// in under dir, as its GetClient names it (KIND_TYPE_NAME[_STORAGE],
// escaped; a name too long for the file system hashed), and whether it
// exists.
func fileStorageDatabase(dir string, kind component.Kind, id component.ID, name string) (string, bool, error) {
	raw := fmt.Sprintf("%s_%s_%s", kindString(kind), id.Type(), id.Name())
	if name != "" {
		raw += "_" + name
	}
	raw = sanitize(raw)
	path := filepath.Join(dir, raw)
	_, err := os.Stat(path)
	if errors.Is(err, syscall.ENAMETOOLONG) {
		sum := sha256.Sum256([]byte(raw))
		path = filepath.Join(dir, hex.EncodeToString(sum[:]))
		_, err = os.Stat(path)
	}
	switch {
	case err == nil:
		return path, true, nil
	case errors.Is(err, os.ErrNotExist):
		return path, false, nil
	default:
		return path, false, err
	}
}

// kindString is file_storage's word for a component kind.
func kindString(k component.Kind) string {
	switch k {
	case component.KindReceiver:
		return "receiver"
	case component.KindProcessor:
		return "processor"
	case component.KindExporter:
		return "exporter"
	case component.KindExtension:
		return "extension"
	case component.KindConnector:
		return "connector"
	default:
		return "other"
	}
}

// sanitize is file_storage's escaping of a name for a file: every
// character but A-Z, a-z, 0-9, '.', '-' and '_' becomes '~' and its
// Unicode code point in four hex digits ('/' is ~002F, '~' itself ~007E).
func sanitize(name string) string {
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "~%04X", r)
		}
	}
	return b.String()
}
