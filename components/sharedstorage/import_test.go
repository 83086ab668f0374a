package sharedstorage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	filestorage "github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/extension/extensiontest"
	"go.opentelemetry.io/collector/extension/xextension/storage"
)

// fileStorageClient is a client of contrib's file_storage on dir, as a
// component configured with `storage: file_storage` gets it; closing it
// shuts the extension down.
type fileStorageClient struct {
	storage.Client
	ext storage.Extension
}

func openFileStorage(t testing.TB, dir string, kind component.Kind, id component.ID, name string) *fileStorageClient {
	t.Helper()
	f := filestorage.NewFactory()
	cfg := f.CreateDefaultConfig().(*filestorage.Config)
	cfg.Directory = dir
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ext, err := f.Create(context.Background(), extensiontest.NewNopSettings(f.Type()), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := ext.Start(context.Background(), componenttest.NewNopHost()); err != nil {
		t.Fatal(err)
	}
	se := ext.(storage.Extension)
	c, err := se.GetClient(context.Background(), kind, id, name)
	if err != nil {
		t.Fatal(err)
	}
	return &fileStorageClient{Client: c, ext: se}
}

func (c *fileStorageClient) close(t testing.TB) {
	t.Helper()
	if err := c.Client.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.ext.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func files(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestImportsWhatFileStorageKept: the verdict processor, the page store
// and a component with a name file_storage escapes kept their data in
// file_storage; shared_storage on the same directory gives each client
// that data at its first use, leaves the old files in place, and never
// reads them in again (a namespace its component emptied stays empty).
func TestImportsWhatFileStorageKept(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	odd := component.MustNewIDWithName("verdict", "a.b-c_d")
	kept := []struct {
		kind component.Kind
		id   component.ID
		name string
		data map[string]string
	}{
		{component.KindProcessor, verdictID, "", map[string]string{"p\x00\x00\x00\x00\x00\x00\x00\x01": "turn", "m": "ring index", "d\x00\x00\x00\x00": "chunk"}},
		{component.KindExporter, pageID, "page", map[string]string{"t1": "verdict span", "l1": "link change"}},
		{component.KindProcessor, odd, "with space/and slash~", map[string]string{"k": "v"}},
	}
	for _, k := range kept {
		c := openFileStorage(t, dir, k.kind, k.id, k.name)
		for key, v := range k.data {
			if err := c.Set(ctx, key, []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		c.close(t)
	}
	before := files(t, dir)

	h := start(t, dir)
	for _, k := range kept {
		if got := contents(t, h.client(k.kind, k.id, k.name)); !equal(got, k.data) {
			t.Errorf("%s %s %q: imported %v, want %v", k.kind, k.id, k.name, got, k.data)
		}
	}
	if n := h.count("otelcol_extension_shared_storage_imported", ""); n != 6 {
		t.Errorf("keys imported: %d, want 6", n)
	}
	// A client file_storage kept nothing for gets nothing, and no file.
	if got := contents(t, h.client(component.KindConnector, countID, "")); len(got) != 0 {
		t.Errorf("a client with no file_storage database: %v", got)
	}
	after := files(t, dir)
	for _, f := range before {
		if !slices.Contains(after, f) {
			t.Errorf("%s was removed", f)
		}
	}
	if want := append(slices.Clone(before), "extension_shared_storage_"); len(after) != len(want) {
		t.Errorf("files after the import: %v, want %v", after, want)
	}

	// The processor empties its namespace; a restart does not bring the
	// old file's keys back.
	proc := h.client(component.KindProcessor, verdictID, "")
	for key := range kept[0].data {
		if err := proc.Delete(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	h.stop()
	again := start(t, dir)
	if got := contents(t, again.client(component.KindProcessor, verdictID, "")); len(got) != 0 {
		t.Errorf("after emptying and a restart the processor holds %v: imported twice", got)
	}
	if got := contents(t, again.client(component.KindExporter, pageID, "page")); !equal(got, kept[1].data) {
		t.Errorf("the page store after a restart: %v", got)
	}
	if n := again.count("otelcol_extension_shared_storage_imported", ""); n != 0 {
		t.Errorf("the second start imported %d keys", n)
	}
}

// TestFindsFileStorageDatabases: the file fileStorageDatabase names is
// the one file_storage made, for plain names, escaped ones and one too
// long for a file name (file_storage hashes it).
func TestFindsFileStorageDatabases(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		kind component.Kind
		id   component.ID
		name string
	}{
		{component.KindProcessor, verdictID, ""},
		{component.KindExporter, pageID, "page"},
		{component.KindConnector, component.MustNewIDWithName("verdictcount", "x"), "a/b~c d"},
		{component.KindReceiver, component.MustNewIDWithName("filelog", strings.Repeat("n", 200)), strings.Repeat("s", 100)},
	} {
		_, found, err := fileStorageDatabase(dir, c.kind, c.id, c.name)
		if err != nil || found {
			t.Fatalf("%s %s: found %v (%v) before file_storage made it", c.id, c.name, found, err)
		}
		fc := openFileStorage(t, dir, c.kind, c.id, c.name)
		fc.close(t)
		path, found, err := fileStorageDatabase(dir, c.kind, c.id, c.name)
		if err != nil || !found {
			t.Fatalf("%s %q: %s not found (%v); the directory holds %v", c.id, c.name, path, err, files(t, dir))
		}
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		if left := files(t, dir); len(left) != 0 {
			t.Fatalf("file_storage made %v, not %s", left, filepath.Base(path))
		}
	}
}
