// Package file implements the `osb file` commands: reading, writing and
// transferring files of a sandbox, and managing its directories.
package file

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

// NewCmdFile returns the `file` group.
func NewCmdFile(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroup("file", "📁 File operations on a sandbox.")
	cmd.AddCommand(
		newCmdCat(f, nil),
		newCmdWrite(f, nil),
		newCmdUpload(f, nil),
		newCmdDownload(f, nil),
		newCmdRm(f, nil),
		newCmdMv(f, nil),
		newCmdMkdir(f, nil),
		newCmdRmdir(f, nil),
		newCmdSearch(f, nil),
		newCmdInfo(f, nil),
		newCmdChmod(f, nil),
		newCmdReplace(f, nil),
		newCmdLs(f, nil),
	)
	return cmd
}

// completeIDThenLocal completes the sandbox id, then leaves the shell's file
// completion to the argument at localIndex (a path on this machine).
func completeIDThenLocal(f *cmdutil.Factory, localIndex int) cobra.CompletionFunc {
	ids := cmdutil.CompleteSandboxIDs(f, false)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		switch len(args) {
		case 0:
			return ids(cmd, args, toComplete)
		case localIndex:
			return nil, cobra.ShellCompDirectiveDefault
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
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
		return 0, cmdutil.UsageErrorf("invalid permission mode '%s'. Use a permission value like 644 or 755", s)
	}
	return n, nil
}

// modeFlag resolves an optional --mode to what is sent.
func modeFlag(cmd *cobra.Command, value string) (int, error) {
	if !cmd.Flags().Changed("mode") {
		return defaultMode, nil
	}
	return parseMode(value)
}

// optional turns an unset string flag into nil (sent as JSON null).
func optional(cmd *cobra.Command, name, value string) *string {
	if !cmd.Flags().Changed(name) {
		return nil
	}
	return &value
}

// checkEncoding accepts only UTF-8: osb moves bytes as they are, and other
// encodings would need a conversion it does not do.
func checkEncoding(enc string) error {
	switch strings.ReplaceAll(strings.ToLower(strings.TrimSpace(enc)), "_", "-") {
	case "utf-8", "utf8":
		return nil
	}
	return cmdutil.UsageErrorf("unsupported encoding '%s': osb transfers bytes unchanged; only utf-8 is accepted", enc)
}

// entryInfo is how a file's description is printed (the official client's
// EntryInfo, in its key order).
type entryInfo struct {
	Path       string    `json:"path"`
	EntryType  string    `json:"entry_type"`
	Mode       int       `json:"mode"`
	Owner      string    `json:"owner"`
	Group      string    `json:"group"`
	Size       int64     `json:"size"`
	ModifiedAt time.Time `json:"modified_at"`
	CreatedAt  time.Time `json:"created_at"`
}

func toEntry(fi client.FileInfo) entryInfo {
	return entryInfo{
		Path:       fi.Path,
		EntryType:  fi.Type,
		Mode:       fi.Mode,
		Owner:      fi.Owner,
		Group:      fi.Group,
		Size:       fi.Size,
		ModifiedAt: utcMicro(fi.ModifiedAt),
		CreatedAt:  utcMicro(fi.CreatedAt),
	}
}

// utcMicro is a time as the official client holds it: UTC, microseconds.
func utcMicro(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

func toEntries(fis []client.FileInfo) []entryInfo {
	out := make([]entryInfo, len(fis))
	for i, fi := range fis {
		out[i] = toEntry(fi)
	}
	return out
}

// pathStatus is one row of rm, mkdir and rmdir results.
type pathStatus struct {
	Path   string `json:"path"`
	Status string `json:"status"`
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
func changePaths(ctx context.Context, f *cmdutil.Factory, sandboxID string, paths []string, format, title, status string,
	call func(*client.DataPlane) error) error {
	dp, err := f.Execd(ctx, sandboxID)
	if err != nil {
		return err
	}
	if err := call(dp); err != nil {
		return err
	}
	return f.Printer(format).List(title, []string{"path", "status"}, statusRows(paths, status))
}
