package skills

import (
	"fmt"
	"strings"

	bundled "github.com/osb-dev/osb/skills"
)

// skill is one bundled skill. The slugs, titles, file names, areas and
// marker ids are part of the compatibility contract: installed files and
// marked blocks written by other clients must be found again.
type skill struct {
	Slug        string `json:"slug"`
	PackageFile string `json:"package_file"`
	Title       string `json:"title"`
	Summary     string `json:"summary"`
	TriggerHint string `json:"trigger_hint"`
	MarkerID    string `json:"marker_id"`
	Area        string `json:"area"`
	SourcePath  string `json:"source_path"`
}

// defaultSkill is what `skills uninstall` removes when no name is given.
const defaultSkill = "sandbox-troubleshooting"

// builtinSkills is in declaration order, which every listing keeps.
var builtinSkills = []skill{
	newSkill("sandbox-troubleshooting", "OpenSandbox Sandbox Troubleshooting", "Troubleshooting",
		"Find out why a sandbox failed, hangs or cannot be reached: its state, health, scoped diagnostic logs and events, then a concrete fix.",
		"Use when a sandbox will not start, crashes, runs out of memory, cannot pull its image, stays pending, or its service cannot be reached."),
	newSkill("sandbox-lifecycle", "OpenSandbox Sandbox Lifecycle", "Lifecycle",
		"Create, inspect, renew, pause, resume and kill sandboxes with sensible defaults, checking the result of every step.",
		"Use when the user wants a sandbox created or managed and needs the exact osb commands to do it."),
	newSkill("command-execution", "OpenSandbox Command Execution", "Execution",
		"Run commands in a sandbox in the foreground or background, follow their status and logs, and keep shell state in persistent sessions.",
		"Use when the user wants to execute something in a sandbox, read its output or logs, stop it, or reuse a shell session."),
	newSkill("file-operations", "OpenSandbox File Operations", "Files",
		"Read, write, upload, download, search, edit and organise files in a sandbox with the dedicated file commands instead of improvised shell.",
		"Use when the user needs to create, inspect, move, change or transfer files or directories inside a sandbox."),
	newSkill("network-egress", "OpenSandbox Network Egress", "Network",
		"Read and change a sandbox's outbound network rules at runtime to allow or deny domains.",
		"Use when the user needs to see or change which outside hosts a sandbox may reach, or to debug a domain that is wrongly allowed or blocked."),
	// The official area map has no entry for this skill, so it shows General.
	newSkill("credential-vault", "OpenSandbox Credential Vault", "General",
		"Create, read, patch and delete a sandbox's Credential Vault without ever putting a secret on the command line or in output.",
		"Use when code in a sandbox must call an outside API with credentials the sandbox itself should never see."),
	// osb's own skill: the official client has no code-interpreter command.
	newSkill("code-interpreter", "OpenSandbox Code Interpreter", "Execution",
		"Run code on Jupyter kernels in a sandbox with osb code, keeping variables between runs in code contexts.",
		"Use when the user wants code evaluated step by step in a sandbox, like a notebook, with values and tracebacks back."),
	// osb's own skill: the official client has no MCP server built in.
	newSkill("mcp-tools", "OpenSandbox MCP Tools", "General",
		"Serve sandboxes to MCP-capable agents with osb mcp, set each coding tool up for it, and choose between the MCP tools and the command line.",
		"Use when an agent should reach sandboxes through MCP tools, or when deciding whether MCP or the osb command line fits a task."),
}

func newSkill(slug, title, area, summary, hint string) skill {
	file := "opensandbox-" + slug + ".md"
	return skill{
		Slug:        slug,
		PackageFile: file,
		Title:       title,
		Summary:     summary,
		TriggerHint: hint,
		MarkerID:    "opensandbox-" + slug,
		Area:        area,
		// The files live inside the binary; this is their path in the source tree.
		SourcePath: "skills/" + file,
	}
}

func skillNames() []string {
	names := make([]string, len(builtinSkills))
	for i, s := range builtinSkills {
		names[i] = s.Slug
	}
	return names
}

// lookupSkill finds a bundled skill by name, in any case.
func lookupSkill(name string) (skill, error) {
	for _, s := range builtinSkills {
		if strings.EqualFold(s.Slug, name) {
			return s, nil
		}
	}
	return skill{}, fmt.Errorf("unknown skill %q; bundled skills: %s", name, strings.Join(skillNames(), ", "))
}

// markdown returns the skill file as it is bundled.
func (s skill) markdown() string {
	b, err := bundled.FS.ReadFile(s.PackageFile)
	if err != nil {
		// Every registered skill is embedded; a test checks it.
		panic(fmt.Sprintf("bundled skill %s is missing: %v", s.PackageFile, err))
	}
	return string(b)
}

func (s skill) beginMarker() string { return "<!-- BEGIN " + s.MarkerID + " -->" }
func (s skill) endMarker() string   { return "<!-- END " + s.MarkerID + " -->" }

// splitFrontMatter separates a leading `---` YAML block from the body. It
// reports ok=false, and the whole text as body, when there is none.
func splitFrontMatter(md string) (front, body string, ok bool) {
	if !strings.HasPrefix(md, "---\n") {
		return "", md, false
	}
	end := strings.Index(md[4:], "\n---\n")
	if end < 0 {
		return "", md, false
	}
	return md[4 : 4+end], md[4+end+5:], true
}

// render is the text installed in the given form. Agent Skills get the file
// as it is; a Cursor rule gets the front matter Cursor reads; plain files
// get a heading and the summary instead, since a stray YAML block would be
// shown to the model as text.
func (s skill) render(f form) string {
	md := s.markdown()
	front, body, ok := splitFrontMatter(md)
	switch {
	case f == formSkill || !ok:
		return strings.TrimSpace(md) + "\n"
	case f == formRule:
		return "---\ndescription: " + frontMatterValue(front, "description") + "\nalwaysApply: false\n---\n\n" +
			"# " + s.Title + "\n\n" + strings.TrimSpace(body) + "\n"
	}
	return "# " + s.Title + "\n\n" + s.Summary + "\n\n" + strings.TrimSpace(body) + "\n"
}

// frontMatterValue is the one-line value of key in a front matter block.
func frontMatterValue(front, key string) string {
	for _, line := range strings.Split(front, "\n") {
		if v, ok := strings.CutPrefix(line, key+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// section returns the text under the first "## heading" or "### heading"
// line, up to the next heading of the same or a higher level, trimmed; ""
// when the heading is absent or the section is empty.
func section(body, heading string) string {
	var out []string
	level := 0
	for _, line := range strings.Split(body, "\n") {
		l := headingLevel(line)
		if level > 0 && l > 0 && l <= level {
			break
		}
		if level == 0 {
			if l > 0 && line == strings.Repeat("#", l)+" "+heading {
				level = l
			}
			continue
		}
		out = append(out, line)
	}
	return strings.TrimSpace(strings.Join(out, "\n"))
}

// headingLevel is 2 or 3 for "## " and "### " lines, else 0; deeper
// headings stay inside the section they belong to.
func headingLevel(line string) int {
	switch {
	case strings.HasPrefix(line, "## "):
		return 2
	case strings.HasPrefix(line, "### "):
		return 3
	}
	return 0
}

// firstJSONFence returns the content of the first ```json block, trimmed.
func firstJSONFence(body string) string {
	start := strings.Index(body, "```json")
	if start < 0 {
		return ""
	}
	rest := body[start+len("```json"):]
	end := strings.Index(rest, "```")
	if end < 0 {
		return ""
	}
	return strings.TrimSpace(rest[:end])
}
