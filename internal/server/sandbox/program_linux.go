package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/osb-dev/osb/internal/server/sandbox/program"
)

// sandboxProgram is the small program a sandbox's init and agent run
// (cmd/osb-sandbox), in a sealed memory file that every init executes:
// one copy in memory for all sandboxes, nothing on disk. nil when osb
// carries no program, or when this host cannot run one from memory: the
// init is then this program itself (/proc/self/exe), larger and slower to
// start, but the same sandbox.
var sandboxProgram = sync.OnceValue(func() *os.File {
	if len(program.Executable) == 0 {
		return nil
	}
	f, err := memoryProgram(program.Executable)
	if err != nil {
		fmt.Fprintf(os.Stderr, "osb server: sandboxes run osb itself: %v\n", err)
		return nil
	}
	return f
})

// memoryProgram writes exe to a sealed memfd and checks that it runs.
func memoryProgram(exe []byte) (*os.File, error) {
	const flags = unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate("osb-sandbox", flags|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		// Kernels before 6.3 know no MFD_EXEC: their memfds are executable.
		fd, err = unix.MemfdCreate("osb-sandbox", flags)
	}
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "osb-sandbox")
	if _, err := f.Write(exe); err != nil {
		f.Close()
		return nil, err
	}
	// Sealed: no process (the server included) can change what every
	// sandbox runs.
	seals := unix.F_SEAL_SEAL | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW | unix.F_SEAL_WRITE
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
		f.Close()
		return nil, fmt.Errorf("sealing: %w", err)
	}
	cmd := programCommand(f, nil)
	cmd.Env = []string{initEnv + "=probe"}
	if out, err := cmd.CombinedOutput(); err != nil {
		f.Close()
		return nil, fmt.Errorf("it does not run here: %v %s", err, out)
	}
	return f, nil
}

// initCommand is the command that starts a sandbox init with the
// descriptors files (3 and up): the sandbox program when there is one,
// else this program.
func initCommand(files []*os.File) *exec.Cmd {
	if prog := sandboxProgram(); prog != nil {
		return programCommand(prog, files)
	}
	cmd := exec.Command("/proc/self/exe")
	cmd.ExtraFiles = files
	return cmd
}

// programCommand runs the program f with the descriptors files, and f
// itself as the next one, executed as /proc/self/fd/N: the kernel opens
// that in the child before it closes any descriptor, and it reaches f
// where no path from the sandbox's user would.
func programCommand(f *os.File, files []*os.File) *exec.Cmd {
	cmd := exec.Command(fmt.Sprintf("/proc/self/fd/%d", 3+len(files)))
	cmd.ExtraFiles = append(files[:len(files):len(files)], f)
	return cmd
}
