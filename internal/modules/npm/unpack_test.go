package npm_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stepbox/stepbox/internal/modules/npm"
)

func tarball(t *testing.T, entries ...tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, h := range entries {
		h.Mode = 0o644
		body := []byte("x")
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(body)
		}
	}
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func TestUnpack(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pkg")
	err := npm.Unpack(tarball(t,
		tar.Header{Name: "package/", Typeflag: tar.TypeDir},
		tar.Header{Name: "package/index.js", Typeflag: tar.TypeReg},
		tar.Header{Name: "package/lib/a.js", Typeflag: tar.TypeReg},
		tar.Header{Name: "package/link", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"},
	), dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"index.js", "lib/a.js"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "link")); err == nil {
		t.Error("a symbolic link was unpacked")
	}
	for _, name := range []string{"package/../../escape.js", "package/a/../../../escape.js", "package//etc/x"} {
		d := filepath.Join(t.TempDir(), "pkg")
		err := npm.Unpack(tarball(t, tar.Header{Name: name, Typeflag: tar.TypeReg}), d)
		if _, serr := os.Stat(filepath.Join(filepath.Dir(d), "escape.js")); serr == nil {
			t.Errorf("%s: escaped the directory (err %v)", name, err)
		}
	}
}
