// Package file implements the `osb file` commands: reading, writing and
// transferring files of a sandbox, and managing its directories.
package file

import (
	"context"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
)

// NewCmdFile returns the `file` group.
func NewCmdFile(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("file", "📁 File operations on a sandbox.")
	cmd.AddCommand(
		newCmdCat(f),
		newCmdWrite(f),
		newCmdUpload(f),
		newCmdDownload(f),
		pathsVerb(f, cmdutil.Verb[pathsOptions]{
			Name:  "rm",
			Short: "Delete files from the sandbox.",
			Long: "Delete files in one request. A path that does not exist is not an error;\n" +
				"a directory is (use 'osb file rmdir').",
		}, "Deleted Files", "deleted", (*client.DataPlane).DeleteFiles),
		newCmdMv(f),
		newCmdMkdir(f),
		pathsVerb(f, cmdutil.Verb[pathsOptions]{
			Name:  "rmdir",
			Short: "Delete directories and everything in them.",
			Long: "Delete each directory with everything below it, like rm -rf. A path that\n" +
				"does not exist is not an error, and a plain file is deleted too.",
		}, "Removed Directories", "removed", (*client.DataPlane).DeleteDirectories),
		newCmdSearch(f),
		newCmdInfo(f),
		newCmdChmod(f),
		newCmdReplace(f),
		newCmdLs(f),
	)
	return cmd
}

// defaultMode is what the official client sends when --mode is not given.
const defaultMode = 755

// parseMode reads --mode as the official client does, as a decimal number
// whose digits are the octal permission ("0755" is 755). Digits 8 and 9 and
// values past 7777 are refused here too: execd would apply the rest of the
// request and fail afterwards.
func parseMode(s string) (int, error) {
	t := strings.TrimSpace(s)
	n, err := strconv.Atoi(strings.TrimPrefix(t, "+"))
	if err != nil || n < 0 || n > 7777 || strings.ContainsAny(t, "89") {
		return 0, ops.UsageErrorf("invalid permission mode '%s'. Use a permission value like 644 or 755", s)
	}
	return n, nil
}

// permFlags are --mode, --owner and --group of the verbs that set them.
type permFlags struct {
	mode, owner, group          string
	modeSet, ownerSet, groupSet bool
}

func (p *permFlags) add(fs *cmdutil.FlagSet, modeUsage, what string) {
	fs.StringVar(&p.mode, "mode", "", modeUsage)
	fs.Given("mode", &p.modeSet)
	fs.StringVar(&p.owner, "owner", "", what+" owner.")
	fs.Given("owner", &p.ownerSet)
	fs.StringVar(&p.group, "group", "", what+" group.")
	fs.Given("group", &p.groupSet)
}

// permission is what is sent: --mode (defaultMode when not given), and the
// owner and group when given (else null).
func (p *permFlags) permission() (client.Permission, error) {
	perm := client.Permission{Mode: defaultMode}
	if p.modeSet {
		m, err := parseMode(p.mode)
		if err != nil {
			return perm, err
		}
		perm.Mode = m
	}
	if p.ownerSet {
		perm.Owner = &p.owner
	}
	if p.groupSet {
		perm.Group = &p.group
	}
	return perm, nil
}

// checkEncoding accepts only UTF-8: osb moves bytes as they are, and other
// encodings would need a conversion it does not do.
func checkEncoding(enc string) error {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(enc)), "_", "-") {
	case "utf-8", "utf8":
		return nil
	}
	return ops.UsageErrorf("unsupported encoding '%s': osb transfers bytes unchanged; only utf-8 is accepted", enc)
}

// entryInfo is how a file's description is printed (the official client's
// EntryInfo, in its key order).
// The table of info shows the tagged columns; search shows fewer.
type entryInfo struct {
	Path       string      `json:"path" table:"1"`
	EntryType  string      `json:"entry_type"`
	Mode       int         `json:"mode" table:"3"`
	Owner      string      `json:"owner" table:"4"`
	Group      string      `json:"group" table:"5"`
	Size       int64       `json:"size" table:"2"`
	ModifiedAt client.Time `json:"modified_at" table:"7"`
	CreatedAt  client.Time `json:"created_at" table:"6"`
}

func toEntry(fi client.FileInfo) entryInfo {
	return entryInfo{
		Path:       fi.Path,
		EntryType:  fi.Type,
		Mode:       fi.Mode,
		Owner:      fi.Owner,
		Group:      fi.Group,
		Size:       fi.Size,
		ModifiedAt: fi.ModifiedAt,
		CreatedAt:  fi.CreatedAt,
	}
}

func toEntries(fis []client.FileInfo) []entryInfo {
	out := make([]entryInfo, len(fis))
	for i, fi := range fis {
		out[i] = toEntry(fi)
	}
	return out
}

// pathStatus is one row of rm, mkdir and rmdir results.
type pathStatus struct {
	Path   string `json:"path" table:"1"`
	Status string `json:"status" table:"2"`
}

func statusRows(paths []string, status string) []pathStatus {
	rows := make([]pathStatus, len(paths))
	for i, p := range paths {
		rows[i] = pathStatus{Path: p, Status: status}
	}
	return rows
}

// changePaths sends one request about paths, then lists each path with
// status, as rm, mkdir and rmdir report.
func changePaths(ctx context.Context, opts *pathsOptions, title, status string, call func(*client.DataPlane) error) error {
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	if err := call(dp); err != nil {
		return err
	}
	return opts.Printer().List(title, statusRows(opts.Paths, status))
}

// pathsOptions is what rm, rmdir and mkdir take: a sandbox and paths.
type pathsOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Paths   []string
}

func (o *pathsOptions) args() []cmdutil.Arg {
	return []cmdutil.Arg{cmdutil.SandboxArg(&o.Sandbox), cmdutil.StringsArg("PATH", &o.Paths)}
}

// pathsVerb declares rm or rmdir: one request about every path given.
func pathsVerb(f *cmdutil.Factory, verb cmdutil.Verb[pathsOptions], title, status string, call func(*client.DataPlane, context.Context, []string) error) *cobra.Command {
	opts := &pathsOptions{}
	verb.Args = opts.args()
	verb.Formats = cmdutil.TableFormats
	verb.Run = func(ctx context.Context, opts *pathsOptions) error {
		return changePaths(ctx, opts, title, status, func(dp *client.DataPlane) error { return call(dp, ctx, opts.Paths) })
	}
	return cmdutil.NewVerb(f, opts, verb)
}
