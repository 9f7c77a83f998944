// Command mklayout writes an OCI layout of one small image, Debian's
// static busybox with its applets, for bench/rows/create-image.sh and bench/images/bench.sh; with
// -registry it serves the same image instead, as REPO:TAG of a registry
// on a free loopback port, writes host:port and a newline to FILE once it
// listens, and serves until it is killed.
//
//	go run ./bench/images/mklayout DIR NAME:TAG
//	go run ./bench/images/mklayout -registry FILE REPO:TAG
package main

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

func main() {
	var err error
	switch {
	case len(os.Args) == 4 && os.Args[1] == "-registry":
		err = serve(os.Args[2], os.Args[3])
	case len(os.Args) == 3:
		err = run(os.Args[1], os.Args[2])
	default:
		fmt.Fprintln(os.Stderr, "usage: mklayout DIR NAME:TAG | mklayout -registry FILE REPO:TAG")
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mklayout:", err)
		os.Exit(1)
	}
}

func run(dir, ref string) error {
	img, err := busybox()
	if err != nil {
		return err
	}
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	return p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": ref}))
}

// serve pushes the image to an in-process registry and serves it.
func serve(file, repo string) error {
	img, err := busybox()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go http.Serve(l, registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	ref, err := name.ParseReference(l.Addr().String() + "/" + repo)
	if err != nil {
		return err
	}
	if err := remote.Write(ref, img); err != nil {
		return err
	}
	if err := os.WriteFile(file, []byte(l.Addr().String()+"\n"), 0o600); err != nil {
		return err
	}
	select {}
}

// busybox is the image: /bin/busybox, a few applets, /etc/passwd.
func busybox() (v1.Image, error) {
	bin, err := os.ReadFile("/bin/busybox")
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "bin/", Typeflag: tar.TypeDir, Mode: 0o755})
	tw.WriteHeader(&tar.Header{Name: "bin/busybox", Typeflag: tar.TypeReg, Mode: 0o755, Size: int64(len(bin))})
	tw.Write(bin)
	for _, a := range []string{"sh", "sleep", "tail", "echo", "cat", "ls"} {
		tw.WriteHeader(&tar.Header{Name: "bin/" + a, Typeflag: tar.TypeSymlink, Linkname: "busybox", Mode: 0o777})
	}
	tw.WriteHeader(&tar.Header{Name: "etc/", Typeflag: tar.TypeDir, Mode: 0o755})
	passwd := "root:x:0:0:root:/root:/bin/sh\n"
	tw.WriteHeader(&tar.Header{Name: "etc/passwd", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(passwd))})
	io.WriteString(tw, passwd)
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, l)
	if err != nil {
		return nil, err
	}
	return mutate.Config(img, v1.Config{Env: []string{"PATH=/bin"}})
}
