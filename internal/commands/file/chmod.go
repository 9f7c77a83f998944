package file

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
)

type chmodOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Path    string
	perm    permFlags
}

func newCmdChmod(f *cmdutil.Factory) *cobra.Command {
	opts := &chmodOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[chmodOptions]{
		Name:    "chmod",
		UseTail: "--mode MODE",
		Short:   "Set the permissions (and owner) of a file in the sandbox.",
		Long: "Set PATH's permission to --mode, given as digits (644, 0755), and its owner\n" +
			"and group when --owner or --group is given.\n\n" +
			"A mode with the setuid, setgid or sticky bit (4755, 2755, 1777) is checked\n" +
			"afterwards: execd answers success but drops those bits, and osb then fails\n" +
			"(exit 1) saying what mode the file has.",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox), cmdutil.StringArg("PATH", &opts.Path)},
		Formats: cmdutil.TableFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			opts.perm.add(fs, "Permission mode, e.g. 644 or 0755 (required).", "File")
			fs.Required("mode")
		},
		Run: runChmod,
	})
}

func runChmod(ctx context.Context, opts *chmodOptions) error {
	perm, err := opts.perm.permission()
	if err != nil {
		return err
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	if err := dp.SetPermissions(ctx, map[string]client.Permission{opts.Path: perm}); err != nil {
		return err
	}
	if err := checkSpecialBits(ctx, dp, opts.Path, perm.Mode); err != nil {
		return err
	}
	return opts.Printer().Success("Permissions set: " + opts.Path)
}

// checkSpecialBits looks at the mode a chmod left when it asked for the
// setuid, setgid or sticky bit (a fourth digit): execd answers 200 and
// drops them, so only the file itself can say whether the chmod did what
// was asked.
func checkSpecialBits(ctx context.Context, dp *client.DataPlane, path string, mode int) error {
	if mode <= 777 {
		return nil
	}
	info, err := dp.FileInfo(ctx, []string{path})
	if err != nil {
		return fmt.Errorf("mode %d was sent for %s, but its mode could not be checked: %w", mode, path, err)
	}
	got, ok := info[path]
	switch {
	case !ok:
		return fmt.Errorf("mode %d was sent for %s, but the server did not describe the file to check it", mode, path)
	case got.Mode == mode%1000:
		return fmt.Errorf("the server did not set mode %d on %s: it kept %d and dropped the setuid, setgid and sticky bits", mode, path, got.Mode)
	case got.Mode != mode:
		return fmt.Errorf("the server did not set mode %d on %s: it now has mode %d", mode, path, got.Mode)
	}
	return nil
}
