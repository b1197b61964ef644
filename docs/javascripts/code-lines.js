// A wrapped line of code goes on under its own indentation, four columns in, not at the left edge:
// Python's indentation is its syntax, and a line that starts again at column 0 reads as a new statement.
// Each line is a span of its own (pymdownx.highlight's line_spans); its indentation is counted here
// and given to CSS (course.css), which draws the hanging indent. The text itself is not changed, so a
// copied block is the file as it is.
function hangCodeLines() {
  for (const line of document.querySelectorAll(".md-typeset pre > code > span[id^='__span']")) {
    const spaces = line.textContent.match(/^ */)[0].length;
    line.style.setProperty("--indent", spaces);
  }
}
if (typeof document$ !== "undefined") {
  document$.subscribe(hangCodeLines);  // Material's pages, loaded or navigated to
} else {
  document.addEventListener("DOMContentLoaded", hangCodeLines);
}
