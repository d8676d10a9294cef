fn main() -> std::process::ExitCode {
    kobana_finance_mcp::cli::main()
}
