/*
 * Default options of the sanitizer builds (make asan), linked into
 * build-asan/mcp-workbench and build-asan/unit only.
 *
 * The end-to-end suites start the workbench with environments of their
 * own (the SDK client passes only HOME, LOGNAME, PATH, SHELL, TERM and
 * USER), so ASAN_OPTIONS from the caller would not reach it.  The options
 * are compiled in instead: every report is written to a file under
 * SAN_LOG_DIR, where tests/sanitizers.sh looks for them, and the first
 * report ends the process.  ASAN_OPTIONS and UBSAN_OPTIONS, when they do
 * reach the process, still override these.
 *
 * The sanitizers share one log file per process (SAN_LOG_DIR/san.PID):
 * in clang's combined runtime the last log_path parsed wins for all of
 * them, so every hook names the same one.  gcc's libubsan ignores
 * __ubsan_default_options' log_path when linked with ASan, which is why
 * the Makefile builds these variants with clang.
 */
#ifndef SAN_LOG_DIR
#define SAN_LOG_DIR "/tmp"
#endif

const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__lsan_default_options(void);

const char *
__asan_default_options(void)
{
	return "log_path=" SAN_LOG_DIR "/san"
	    ":detect_leaks=1:abort_on_error=0:strict_string_checks=1"
	    ":detect_stack_use_after_return=1:check_initialization_order=1"
	    ":handle_abort=1";
}

const char *
__ubsan_default_options(void)
{
	return "log_path=" SAN_LOG_DIR "/san:print_stacktrace=1"
	    ":halt_on_error=1";
}

const char *
__lsan_default_options(void)
{
	return "log_path=" SAN_LOG_DIR "/san";
}
