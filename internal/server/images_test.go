//go:build linux

package server_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/osb-dev/osb/internal/server"
	"github.com/osb-dev/osb/internal/server/image"
	"github.com/osb-dev/osb/internal/server/image/imagetest"
)

// imageClient is an isolated server that runs images from dir (an
// --image-dir) and from registries.
func imageClient(t *testing.T, dir string, more ...func(*server.Options)) *client {
	t.Helper()
	c := newClient(t, append([]func(*server.Options){func(o *server.Options) {
		o.Images = &image.Options{ImageDir: dir}
	}}, more...)...)
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	return c
}

func imageCreate(c *client, uri string, extra map[string]any) string {
	c.t.Helper()
	m := map[string]any{"image": map[string]any{"uri": uri}, "entrypoint": []string{"sleep", "1000"}}
	for k, v := range extra {
		m[k] = v
	}
	return c.create(m)
}

// A sandbox runs in its image's root: the image's files and programs,
// none of the host's, its Env, WorkingDir and User for commands; what a
// command writes is the sandbox's own, and a layer's whiteout hides what
// a lower layer had.
func TestSandboxRunsItsImage(t *testing.T) {
	t.Parallel()
	top := imagetest.Layer(t, imagetest.Entry{Name: "etc/motd", Body: "from the image\n"},
		imagetest.Entry{Name: "opt/tools/bin/serve", Body: "#!/bin/sh\necho \"started in $PWD\" > /tmp/started\nexec sleep 1000\n", Mode: 0o755},
		imagetest.Entry{Name: "home/app/.wh.gone"}, imagetest.Entry{Name: "srv/"}, imagetest.Entry{Name: "srv/app/", UID: 1000, GID: 1000})
	base := imagetest.Layer(t, imagetest.Entry{Name: "home/app/gone", Body: "deleted above"})
	img := imagetest.Busybox(t, func(cf *v1.Config) {
		cf.Env = []string{"PATH=/opt/tools/bin:/bin", "GREETING=hello"}
		cf.WorkingDir, cf.User = "/srv/app", "app"
	}, base, top)
	dir := t.TempDir()
	imagetest.WriteLayout(t, filepath.Join(dir, "tools"), "1", img)
	c := imageClient(t, dir)
	// The entrypoint is found on the image's PATH and starts in its WorkingDir.
	id := imageCreate(c, "tools:1", map[string]any{"entrypoint": []string{"serve"}})
	if !eventually(t, 10*time.Second, func() bool { out, _ := c.sh(id, "cat /tmp/started"); return out == "started in /srv/app" }) {
		out, _ := c.sh(id, "cat /tmp/started")
		t.Errorf("entrypoint wrote %q", out)
	}
	// The files API sees the image's files.
	if r := c.dataDo(c.endpoint(id, 44772, true), "GET", "/files/download?path=/etc/motd"); r.status != 200 || string(r.body) != "from the image\n" {
		t.Errorf("files API download of /etc/motd: %d %q", r.status, r.body)
	}

	out, code := c.sh(id, `cat /etc/motd; echo "$GREETING"; pwd; id -u; id -g; echo "$HOME"; ls /home/app; test -e /usr/bin/python3 && echo host-python; test -e /bin/bash && echo host-bash; echo done`)
	want := "from the image\nhello\n/srv/app\n1000\n1000\n/home/app\ndone"
	if code != 0 || out != want {
		t.Errorf("in the image sandbox: exit %d, output\n%s\nwant\n%s", code, out, want)
	}
	// The root is writable, as the image's owners allow (the image's
	// user cannot write root's /etc), and the sandbox's own.
	if out, code := c.sh(id, `echo mine > /srv/app/note && cat /srv/app/note; touch /etc/new 2>/dev/null || echo denied`); code != 0 || out != "mine\ndenied" {
		t.Errorf("writing: exit %d, %q", code, out)
	}
	other := imageCreate(c, "tools:1", nil)
	if out, _ := c.sh(other, `ls /srv/app; echo end`); out != "end" {
		t.Errorf("a second sandbox of the image sees %q, want none of the first one's files", out)
	}
	r := c.expect(200, c.do("GET", "/sandboxes/"+id, nil)).json(t)
	msg, _ := r["status"].(map[string]any)["message"].(string)
	if !strings.Contains(msg, "image tools:1 (sha256:") {
		t.Errorf("status message %q does not name the image", msg)
	}
}

// A pulled image is cached: the second create needs no registry.
func TestImagePulledOnceThenCached(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t, nil)
	imagetest.Push(t, host+"/team/bb:1", imagetest.Busybox(t, nil))
	c := imageClient(t, "")
	first := imageCreate(c, host+"/team/bb:1", nil)
	if out, code := c.sh(first, "echo pulled"); code != 0 || out != "pulled" {
		t.Fatalf("first: %d %q", code, out)
	}
	c.expect(204, c.do("DELETE", "/sandboxes/"+first, nil))
	// Nothing answers there any more; the cache does.
	imagetest.Push(t, host+"/team/other:1", imagetest.Busybox(t, nil))
	second := imageCreate(c, host+"/team/bb:1", nil)
	if out, code := c.sh(second, "echo cached"); code != 0 || out != "cached" {
		t.Fatalf("second: %d %q", code, out)
	}
}

// A requested platform is pulled as that platform from a multi-platform
// index; one this host cannot run is refused before anything is pulled.
func TestImagePlatform(t *testing.T) {
	t.Parallel()
	mark := func(arch string) v1.Image {
		return imagetest.ForArch(t, imagetest.Busybox(t, nil, imagetest.Layer(t, imagetest.Entry{Name: "arch", Body: arch})), arch)
	}
	var asked atomic.Int32
	host := imagetest.Registry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodGet {
				asked.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	other := imagetest.OtherArch()
	imagetest.PushIndex(t, host+"/multi:1", mark(other), mark(runtime.GOARCH))
	c := imageClient(t, "")
	id := imageCreate(c, host+"/multi:1", map[string]any{"platform": map[string]string{"os": "linux", "arch": runtime.GOARCH}})
	if out, code := c.sh(id, "cat /arch"); code != 0 || out != runtime.GOARCH {
		t.Errorf("host platform: %d %q", code, out)
	}
	asked.Store(0)
	r := c.expect(400, c.do("POST", "/sandboxes", createBody(map[string]any{"image": map[string]any{"uri": host + "/multi:1"},
		"platform": map[string]string{"os": "linux", "arch": other}})))
	want := "Platform linux/" + other + " cannot be satisfied: this server runs linux/" + runtime.GOARCH + "."
	if m := r.json(t); m["code"] != "SANDBOX::INVALID_PARAMETER" || m["message"] != want {
		t.Errorf("other platform: %s", r.body)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("a refused platform asked the registry %d times", n)
	}
}

// An image that cannot be had fails the create with the registry's
// reason, as the real server does (500 DOCKER::SANDBOX_IMAGE_PULL_FAILED),
// a registry that cannot be reached at all included; nothing is left.
func TestImagePullFailures(t *testing.T) {
	t.Parallel()
	host := imagetest.Registry(t, nil)
	c := imageClient(t, "")
	for _, tc := range []struct{ uri, reason string }{
		{host + "/missing:1", "NAME_UNKNOWN"},
		{"Bad Ref", "could not parse reference"},
		{"127.0.0.1:1/offline:1", "connection refused"},
	} {
		r := c.expect(500, c.do("POST", "/sandboxes", createBody(map[string]any{"image": map[string]any{"uri": tc.uri}})))
		m := r.json(t)
		if m["code"] != "DOCKER::SANDBOX_IMAGE_PULL_FAILED" || !strings.HasPrefix(m["message"].(string), "Failed to pull image "+tc.uri+": ") ||
			!strings.Contains(m["message"].(string), tc.reason) {
			t.Errorf("%s: %s", tc.uri, r.body)
		}
	}
	if r := c.expect(200, c.do("GET", "/sandboxes", nil)).json(t); len(r["items"].([]any)) != 0 {
		t.Errorf("failed creates left sandboxes: %v", r["items"])
	}
}

// The attacks of isolation_test.go, from a sandbox that runs an image:
// no host file, no other sandbox, no shared layer or host id reached.
func TestImageSandboxBoundary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	imagetest.WriteLayout(t, filepath.Join(dir, "bb"), "1", imagetest.Busybox(t, nil))
	c := imageClient(t, dir)
	a, b := imageCreate(c, "bb:1", nil), imageCreate(c, "bb:1", nil)
	if _, code := c.sh(b, "echo secret-of-b > /workspace/b-marker; echo layer-of-b > /bin/b-was-here"); code != 0 {
		t.Fatal("writing in sandbox b failed")
	}
	sbB, _ := c.srv.Sandbox(b)
	for _, p := range []string{"/etc/shadow", "/work", "/usr", c.srv.DataDir(), sbB.FSDir(), "/bin/b-was-here", "/workspace/b-marker"} {
		if out, code := c.sh(a, "ls -d "+p+" 2>&1 || echo absent"); !strings.HasSuffix(out, "absent") || code != 0 {
			t.Errorf("%s is visible in sandbox a: %q", p, out)
		}
	}
	out, _ := c.sh(a, `tr -s ' ' < /proc/self/uid_map; mount -o remount,rw /run/osb 2>/dev/null && echo remounted
mkdir -p /tmp/jail; cd /; chroot /tmp/jail /bin/sh -c 'cd ../../../..; ls /' 2>&1 || echo no-chroot-shell
ls /; echo done`)
	if strings.Contains(out, " 0 0 4294967295") || strings.Contains(out, "remounted") || strings.Contains(out, "\nwork\n") || !strings.HasSuffix(out, "done") {
		t.Errorf("from the image sandbox: %q", out)
	}
	// The shared layer on the host is unchanged by b's write.
	layers, _ := filepath.Glob(filepath.Join(c.srv.DataDir(), "images", "layers", "*", "bin", "b-was-here"))
	if len(layers) > 0 {
		t.Errorf("a sandbox wrote into a shared layer: %v", layers)
	}
}

// A registry that wants credentials gets the request's image.auth; without
// them the create fails with the registry's answer. A registry that stalls
// fails the create at the pull deadline instead of hanging it.
func TestImageAuthAndStall(t *testing.T) {
	t.Parallel()
	img := imagetest.Busybox(t, nil)
	stall := make(chan struct{})
	defer close(stall)
	host := imagetest.Registry(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasPrefix(r.URL.Path, "/v2/slow/") {
				select {
				case <-stall:
				case <-r.Context().Done():
				}
				return
			}
			if u, p, ok := r.BasicAuth(); !ok || u != "ci" || p != "s3cret" {
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	imagetest.Push(t, host+"/private/app:1", img, remote.WithAuth(&authn.Basic{Username: "ci", Password: "s3cret"}))
	c := newClient(t, func(o *server.Options) { o.Images = &image.Options{Keychain: authn.NewMultiKeychain()} })
	if !c.srv.Isolated() {
		t.Skip("sandboxes cannot be isolated on this machine")
	}
	uri := host + "/private/app:1"
	r := c.expect(500, c.do("POST", "/sandboxes", createBody(map[string]any{"image": map[string]any{"uri": uri}})))
	if r.code() != "DOCKER::SANDBOX_IMAGE_PULL_FAILED" || !strings.Contains(string(r.body), "UNAUTHORIZED") {
		t.Errorf("without credentials: %s", r.body)
	}
	id := c.create(createBody(map[string]any{"image": map[string]any{"uri": uri, "auth": map[string]any{"username": "ci", "password": "s3cret"}}}))
	if out, code := c.sh(id, "echo in"); code != 0 || out != "in" {
		t.Errorf("with credentials: %d %q", code, out)
	}
	impatient := newClient(t, func(o *server.Options) {
		o.Images = &image.Options{Keychain: authn.NewMultiKeychain(), StallTimeout: time.Second}
	})
	r = impatient.expect(500, impatient.do("POST", "/sandboxes", createBody(map[string]any{"image": map[string]any{"uri": host + "/slow/app:1"}})))
	if r.code() != "DOCKER::SANDBOX_IMAGE_PULL_FAILED" || !strings.Contains(string(r.body), "did not answer in time") {
		t.Errorf("stalled registry: %s", r.body)
	}
	if strings.Contains(string(r.body), "s3cret") {
		t.Error("the registry password is in an answer")
	}
}

// A snapshot of an image sandbox keeps its whole writable root, as a
// Docker commit does (files changed, made and deleted anywhere, a
// directory replaced), and restores onto the same image; a snapshot of
// the restored sandbox keeps both sandboxes' changes.
func TestImageSnapshotRestoresOntoTheImage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	img := imagetest.Busybox(t, nil, imagetest.Layer(t, imagetest.Entry{Name: "etc/motd", Body: "image file\n"},
		imagetest.Entry{Name: "opt/"}, imagetest.Entry{Name: "opt/gone", Body: "x"},
		imagetest.Entry{Name: "data/"}, imagetest.Entry{Name: "data/old", Body: "x"}))
	imagetest.WriteLayout(t, filepath.Join(dir, "bb"), "1", img)
	c := imageClient(t, dir)
	id := imageCreate(c, "bb:1", nil)
	if out, code := c.sh(id, "echo kept > /workspace/note && echo changed > /etc/motd && rm /opt/gone && "+
		"rm -r /data && mkdir /data && echo fresh > /data/new && mkdir -p /usr/local/pkg && echo lib > /usr/local/pkg/lib"); code != 0 {
		t.Fatalf("changing the root: %d %q", code, out)
	}
	restored := restoreSnapshotOf(t, c, id)
	const check = "cat /workspace/note /etc/motd /usr/local/pkg/lib; ls /data; test -e /opt/gone || echo gone; test -e /usr/bin/python3 || echo no-host-programs"
	if out, code := c.sh(restored, check); code != 0 || out != "kept\nchanged\nlib\nnew\ngone\nno-host-programs" {
		t.Errorf("restored sandbox: %d %q", code, out)
	}
	if _, code := c.sh(restored, "echo again >> /etc/motd && rm /usr/local/pkg/lib"); code != 0 {
		t.Fatal("changing the restored root failed")
	}
	again := restoreSnapshotOf(t, c, restored)
	if out, code := c.sh(again, "cat /etc/motd; ls /data; ls /usr/local/pkg; test -e /opt/gone || echo gone"); code != 0 || out != "changed\nagain\nnew\ngone" {
		t.Errorf("snapshot of the restored sandbox: %d %q", code, out)
	}
}

// restoreSnapshotOf snapshots sandbox id and creates a sandbox from it.
func restoreSnapshotOf(t *testing.T, c *client, id string) string {
	t.Helper()
	snap := snapshotOf(t, c, id, nil)
	if m := settledSnapshot(t, c, snap); stateOf(m) != "Ready" {
		t.Fatalf("snapshot: %v", m)
	}
	return c.create(map[string]any{"snapshotId": snap, "image": nil, "entrypoint": nil})
}

// An image with no shell at all (a distroless one) still runs its
// entrypoint.
func TestImageWithoutShell(t *testing.T) {
	t.Parallel()
	bin := imagetest.StaticBusybox(t)
	img, err := mutate.AppendLayers(empty.Image, imagetest.Layer(t, imagetest.Entry{Name: "app/"},
		imagetest.Entry{Name: "app/busybox", Body: string(bin), Mode: 0o755}))
	if err != nil {
		t.Fatal(err)
	}
	if img, err = mutate.Config(img, v1.Config{Env: []string{"PATH=/app"}}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	imagetest.WriteLayout(t, filepath.Join(dir, "distroless"), "1", img)
	c := imageClient(t, dir)
	id := imageCreate(c, "distroless:1", map[string]any{"entrypoint": []string{"busybox", "sleep", "1000"}})
	sb, _ := c.srv.Sandbox(id)
	running := func() bool {
		for _, pid := range sb.PIDs() {
			if b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); string(b) == "busybox\x00sleep\x001000\x00" {
				return true
			}
		}
		return false
	}
	if !eventually(t, 10*time.Second, running) {
		t.Errorf("the entrypoint of a shell-less image is not running; log: %s", readLog(sb.LogPath()))
	}
}

func readLog(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}
