package client

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestSnapshotsAgainstTheLocalServer(t *testing.T) {
	ctx := context.Background()
	c := localClient(t)
	sb := localSandbox(t, c)
	named, err := c.CreateSnapshot(ctx, sb.ID, "before")
	if err != nil || named.Status.State != "Creating" || named.Name == nil || *named.Name != "before" || named.SandboxID != sb.ID {
		t.Fatalf("create: %+v, %v", named, err)
	}
	got := named
	for deadline := time.Now().Add(30 * time.Second); got.Status.State == "Creating" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		if got, err = c.GetSnapshot(ctx, named.ID); err != nil {
			t.Fatal(err)
		}
	}
	if got.Status.State != SnapshotReady || got.Status.LastTransitionAt == nil || got.CreatedAt == nil {
		t.Errorf("get: %+v", got)
	}
	unnamed, err := c.CreateSnapshot(ctx, sb.ID, "")
	if err != nil || unnamed.Name != nil {
		t.Fatalf("unnamed: %+v, %v", unnamed, err)
	}
	name := "before"
	list, err := c.ListSnapshots(ctx, ListSnapshotsParams{SandboxID: sb.ID, Name: &name, States: []string{"Ready", "Failed"}})
	if err != nil || len(list.Items) != 1 || list.Items[0].ID != named.ID {
		t.Errorf("list: %+v, %v", list, err)
	}
	if err := c.DeleteSnapshot(ctx, named.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetSnapshot(ctx, named.ID); !IsStatus(err, http.StatusNotFound) {
		t.Errorf("get deleted: %v", err)
	}
	if _, err := c.CreateSnapshot(ctx, "nope", ""); !IsStatus(err, http.StatusNotFound) {
		t.Errorf("unknown sandbox: %v", err)
	}
}

func TestSnapshotQueryOnTheWire(t *testing.T) {
	var uri string
	c, _ := newTestClient(t, func(w http.ResponseWriter, r *http.Request) {
		uri = r.URL.RequestURI()
		w.Write([]byte(`{"items":[],"pagination":{"page":1,"pageSize":20,"totalItems":0,"totalPages":0,"hasNextPage":false}}`))
	})
	empty := ""
	if _, err := c.ListSnapshots(context.Background(), ListSnapshotsParams{SandboxID: "sb 1", Name: &empty, States: []string{"Ready", "weird"}, Page: 1}); err != nil {
		t.Fatal(err)
	}
	if uri != "/v1/snapshots?name=&page=1&sandboxId=sb+1&state=Ready&state=weird" {
		t.Errorf("query %s", uri)
	}
	if _, err := c.ListSnapshots(context.Background(), ListSnapshotsParams{}); err != nil || uri != "/v1/snapshots" {
		t.Errorf("no filters: %s %v", uri, err)
	}
}
