package main

import "testing"

func TestSpliceSection(t *testing.T) {
	const sec = compressionHeading + "\n\nnew\n\n"
	tests := []struct{ name, md, want string }{
		{"replaced in place", "# r\n\n" + compressionHeading + "\n\nold\n\n## Where edge spends its CPU\n\nx\n",
			"# r\n\n" + sec + "## Where edge spends its CPU\n\nx\n"},
		{"replaced at the end", "# r\n\n" + compressionHeading + "\n\nold\n", "# r\n\n" + sec},
		{"inserted before the profile", "# r\n\n## Where edge spends its CPU\n\nx\n", "# r\n\n" + sec + "## Where edge spends its CPU\n\nx\n"},
		{"appended", "# r\n\n## Other\n\ny\n", "# r\n\n## Other\n\ny\n\n" + sec},
		{"empty file", "", sec},
	}
	for _, tc := range tests {
		if got := spliceSection(tc.md, compressionHeading, sec); got != tc.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tc.name, got, tc.want)
		}
	}
}
