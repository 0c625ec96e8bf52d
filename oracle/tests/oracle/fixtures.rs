//! The oracle on every hand-written fixture, mutations included. Where the
//! compiler escalates a mutation, this table says what the oracle does
//! instead: refuse ("cannot judge") or judge, and why that is right.

use std::path::PathBuf;

use fcd_oracle::{Verdict, judge};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn canonical(profile: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("profiles").join(profile).join("canonical.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// A mutation case of `profiles/PROFILE/tests/mutations.toml`: a base tree and its edits.
#[derive(serde::Deserialize)]
struct Cases {
    case: Vec<Case>,
}

#[derive(serde::Deserialize)]
struct Case {
    name: String,
    base: Option<PathBuf>,
    #[serde(default)]
    edit: Vec<fcd_edits::Edit>,
}

/// The release root of `fixture`: a fixture directory, or `LIST/NAME` (a case
/// of `profiles/PROFILE/tests/LIST.toml`) materialized from its declared edits into `scratch`.
fn tree(profile: &str, fixture: &str, scratch: &tempfile::TempDir) -> PathBuf {
    let Some((list, name)) = fixture.split_once('/') else {
        return root().join("fixtures").join(profile).join(fixture);
    };
    let file = root().join("profiles").join(profile).join("tests").join(format!("{list}.toml"));
    let cases: Cases = toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let case = cases.case.into_iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{profile}: no mutation {name}"));
    let base = file.parent().unwrap().join(case.base.expect("a mutation has a base"));
    let into = scratch.path().join(name);
    std::fs::create_dir(&into).unwrap();
    fcd_edits::materialize(&base, &case.edit, &into).unwrap_or_else(|e| panic!("{profile}/{name}: {e}"));
    into
}

/// `expected`: the verdicts of calls in name order, or one `CannotJudge` for all.
fn check(profile: &str, fixture: &str, expected: &[Verdict]) {
    let scratch = tempfile::tempdir().unwrap();
    let dir = tree(profile, fixture, &scratch);
    let judgements = judge(profile, &dir, &canonical(profile)).unwrap();
    let got: Vec<Verdict> = judgements.iter().map(|j| j.verdict.clone()).collect();
    let want: Vec<Verdict> = if expected == [Verdict::CannotJudge] { vec![Verdict::CannotJudge; got.len()] } else { expected.to_vec() };
    assert_eq!(got, want, "{profile}/{fixture}: {judgements:#?}");
}

use Verdict::{CannotJudge as Cannot, Reject, Safe, Unknown, Unsafe};

const UNGUARDED: &[Verdict] = &[Safe, Unsafe, Unknown];
const GUARDED: &[Verdict] = &[Safe, Reject, Reject];

#[test]
fn git_diff_regimes_and_mutations() {
    let cases: &[(&str, &[Verdict])] = &[
        ("unguarded", UNGUARDED),
        ("guarded", GUARDED),
        ("mutations/01_comment_spoof", UNGUARDED),
        ("mutations/02_guard_after_sink", UNGUARDED),
        ("mutations/03_missing_sink", &[Cannot]),
        // Added calls are the call-site guard's business, not the oracle's: it judges the flow.
        ("mutations/04_added_filesystem_call", UNGUARDED),
        ("mutations/05_added_network_call", UNGUARDED),
        ("mutations/06_added_process_call", UNGUARDED),
        ("mutations/07_comment_control", GUARDED),
        ("mutations/08_dynamic_getattr", &[Cannot]),
        ("mutations/09_target_rebound", &[Cannot]),
        ("mutations/10_guard_not_exiting", UNGUARDED),
        ("mutations/11_guard_other_variable", UNGUARDED),
        ("mutations/12_guard_in_dead_code", UNGUARDED),
        ("mutations/13_two_sinks", &[Cannot]),
        ("mutations/14_extra_keyword", &[Cannot]),
        ("mutations/15_duplicate_region", &[Cannot]),
        ("mutations/16_region_renamed", &[Cannot]),
        // Tokens do not check grammar: the oracle reads the missing colon's function anyway.
        ("mutations/17_parse_error", UNGUARDED),
        // The oracle does not follow aliases: it finds no `.git.diff(` call and refuses.
        ("mutations/18_aliases_resolved", &[Cannot]),
        ("mutations/19_guard_returns", GUARDED),
        ("mutations/20_unresolved_receiver", UNGUARDED),
        // The diff method is picked through a lambda: no line calls `.git.diff(`, so the oracle refuses.
        ("mutations/21_call_of_call_result", &[Cannot]),
        ("mutations/22_not_utf8", &[Cannot]),
    ];
    for (fixture, expected) in cases {
        check("git-diff", fixture, expected);
    }
}

#[test]
fn github_regimes_and_mutations() {
    let default_false: &[Verdict] = &[Unsafe, Safe, Unsafe];
    let default_true: &[Verdict] = &[Safe, Safe, Unsafe];
    let cases: &[(&str, &[Verdict])] = &[
        ("default-false", default_false),
        ("default-true", default_true),
        ("mutations/01_default_flipped", default_false),
        ("mutations/02_flow_broken", &[Cannot]),
        ("mutations/03_extra_network_call", default_true),
        ("mutations/04_second_create_repository", &[Cannot]),
        ("mutations/05_comment_control", default_true),
        ("mutations/06_reassigned", &[Cannot]),
        ("mutations/07_second_create_call", &[Cannot]),
        ("mutations/08_constant_default", default_true),
        ("mutations/09_variable_default", &[Cannot]),
        // A hard-coded Private is outside what the oracle reads: it refuses.
        ("mutations/10_literal_field", &[Cannot]),
        ("mutations/11_direct_map_read", &[Cannot]),
        ("mutations/12_dynamic_callee", default_true),
        // An unclosed brace: the function's body never ends.
        ("mutations/13_parse_error", &[Cannot]),
        ("factory", default_false),
        ("mutations/14_factory_parameter_renamed", default_false),
        // The oracle reads the handler's flow inside CreateRepository: what the factory does
        // before it returns the handler, its declared result and its wrapper are the
        // compiler's surroundings checks (15, 16, 18, 19), as the request parameter
        // named like the dependencies is the inventory's (17).
        ("mutations/15_factory_rebinds_dependencies", default_false),
        ("mutations/16_factory_result_unreviewed", default_false),
        ("mutations/17_handler_parameter_takes_the_name", default_false),
        ("mutations/18_factory_wrapped", default_false),
        ("mutations/19_factory_of_a_factory", default_false),
        ("mark3labs-client", default_false),
        ("mutations/20_client_parameter_renamed", default_false),
        // Which client is called and how the tool is registered are the compiler's
        // inventory and surroundings checks (21 to 24); the oracle judges the flow.
        ("mutations/21_client_of_another_type", default_false),
        ("mutations/22_client_replaced_in_the_handler", default_false),
        ("mutations/23_registration_wrapped", default_false),
        ("mutations/24_handler_taken_apart", default_false),
    ];
    for (fixture, expected) in cases {
        check("github-create-repository", fixture, expected);
    }
}

#[test]
fn gist_regime_and_mutations() {
    let secret: &[Verdict] = &[Safe, Unsafe, Safe];
    let cases: &[(&str, &[Verdict])] = &[
        ("secret-default", secret),
        ("mutations/01_locals_renamed_and_reordered", secret),
        // Public hard-coded true: every gist is public, whatever the call says.
        ("mutations/02_public_hard_coded", &[Unsafe, Unsafe, Unsafe]),
        // The compiler escalates the unreviewed helper; the oracle reads its literal default.
        ("mutations/03_default_flipped", &[Unsafe, Unsafe, Safe]),
        ("mutations/04_flag_negated", &[Cannot]),
        ("mutations/05_gist_changed_before_create", &[Cannot]),
        ("mutations/06_second_create", &[Cannot]),
        // Which client the dependencies give is the inventory's business, not the oracle's: it judges the flow.
        ("mutations/07_client_of_another_type", secret),
        ("factory", secret),
        // What the factory does before it returns the handler is the compiler's surroundings check.
        ("mutations/08_factory_rebinds_dependencies", secret),
        ("mark3labs", secret),
        ("gosdk", secret),
        // The registration path and which client is called are the compiler's checks.
        ("mutations/09_mark3labs_handler_wrapped", secret),
        ("mutations/10_gosdk_client_rebound", secret),
    ];
    for (fixture, expected) in cases {
        check("github-create-gist", fixture, expected);
    }
}

#[test]
fn create_or_update_file_shapes_and_mutations() {
    // Calls A (sha omitted), B (sha given), C (sha empty), D (a path out of contents/).
    let create_only: &[Verdict] = &[Safe, Unsafe, Safe, Unknown];
    let blind: &[Verdict] = &[Unsafe, Unsafe, Unsafe, Unknown];
    let cases: &[(&str, &[Verdict])] = &[
        ("checked", create_only),
        ("blind", blind),
        ("factory", blind),
        ("mark3labs", create_only),
        ("gosdk", create_only),
        // The compiler escalates the edited pinned body; the oracle reads the current SHA copied into the options.
        ("mutations/01_checked_copies_the_current_sha", blind),
        // Without the refusal the options still only carry the caller's sha: create-only.
        ("mutations/02_checked_refusal_dropped", create_only),
        // A lookup whose SHA reaches the options: a blind overwrite (the compiler's inventory refuses the lookup).
        ("mutations/03_plain_reads_the_file_first", blind),
        ("mutations/04_plain_head_request", blind),
        ("mutations/05_plain_second_write", &[Cannot]),
        ("mutations/06_plain_locals_renamed", create_only),
        // Nothing but the caller's sha reaches the options any more: the oracle says create-only
        // where the compiler, which does not follow the SHA, keeps the blind shape's answer.
        ("mutations/07_blind_without_the_probe", create_only),
        // The factory and the registration are the compiler's surroundings checks.
        ("mutations/08_factory_rebinds_dependencies", blind),
        ("mutations/09_plain_sha_read_by_another_helper", &[Cannot]),
        ("mutations/10_checked_wrapped_registration", create_only),
    ];
    for (fixture, expected) in cases {
        check("github-create-or-update-file", fixture, expected);
    }
}

#[test]
fn azure_shapes_and_mutations() {
    let legacy: &[Verdict] = &[Unsafe, Unknown, Unknown];
    let wired: &[Verdict] = &[Safe, Safe, Unsafe];
    let cases: &[(&str, &[Verdict])] = &[
        ("legacy-enabled", legacy),
        ("wired-default-false", wired),
        ("mutations/01_registered_not_bound", &[Cannot]),
        ("mutations/02_bound_not_passed", &[Cannot]),
        ("mutations/03_passed_not_mapped", &[Cannot]),
        // The definition's default factory says true: omitted is public.
        ("mutations/04_default_flipped", &[Unsafe, Safe, Unsafe]),
        // Added calls are the call-site guard's business.
        ("mutations/05_extra_network_call", wired),
        ("mutations/06_comment_control", wired),
        ("mutations/07_duplicate_registration", &[Cannot]),
        // The oracle does not look for the deployment call; the compiler requires it.
        ("mutations/08_missing_deployment", wired),
        ("mutations/09_odd_csharp", wired),
        ("mutations/10_template_hard_codes_disabled", &[Safe, Unknown, Unknown]),
        ("attributes-default-false", wired),
        ("mutations/11_attr_twin_renamed_reordered_commented", wired),
        ("mutations/12_attr_option_renamed_by_attribute", &[Cannot]),
        ("mutations/13_attr_default_value_true", &[Cannot]),
        ("mutations/14_attr_not_nullable", &[Cannot]),
        ("mutations/15_attr_fallback_true", &[Unsafe, Safe, Unsafe]),
        ("mutations/16_attr_property_initializer", &[Cannot]),
        // `??=` is a second read of the option: the oracle refuses.
        ("mutations/17_attr_written_before_the_sink", &[Cannot]),
        ("mutations/22_attr_rename_reads_another_option", &[Cannot]),
    ];
    for (fixture, expected) in cases {
        check("azure-redis-create", fixture, expected);
    }
}

#[test]
fn dbhub_regimes_and_mutations() {
    let allowed: &[Verdict] = &[Safe, Unsafe, Safe, Unknown];
    let refused: &[Verdict] = &[Safe, Reject, Safe, Unknown];
    let cases: &[(&str, &[Verdict])] = &[
        ("bundle-assignment-allowed", allowed),
        ("bundle-assignment-refused", refused),
        ("ts-assignment-allowed", allowed),
        ("ts-assignment-refused", refused),
        ("mutations/01_comment_spoof", allowed),
        ("mutations/02_missing_guard", &[Cannot]),
        // Tokens cannot tell that the guard's body falls through; the oracle sees no return and refuses.
        ("mutations/03_guard_falls_through", &[Cannot]),
        ("mutations/04_duplicate_classifier", &[Cannot]),
        // Added calls are the call-site guard's business.
        ("mutations/05_filesystem_call", refused),
        ("mutations/06_network_call", refused),
        ("mutations/07_process_call", refused),
        ("mutations/08_comment_control", refused),
        ("mutations/09_minified", &[Cannot]),
        // Issue 14 point 4: renamed locals, reformatting, reordering and an
        // inlined flag read the same; the flag must be the registered config's readonly.
        ("mutations/10_connector_renamed", refused),
        ("mutations/11_mode_flag_and_config_renamed", refused),
        ("mutations/12_result_locals_renamed", refused),
        ("mutations/13_reformatted_reordered_commented", refused),
        ("mutations/14_flag_inlined", refused),
        // Which connector runs the SQL is the call-site guard's business (inventory), as for 05-07.
        ("mutations/20_renamed_from_another_connector", refused),
        ("mutations/21_connector_bound_twice", refused),
        ("mutations/22_connector_a_shadowing_parameter", refused),
        ("mutations/23_mode_flag_constant", &[Cannot]),
        ("mutations/24_mode_flag_inverted", &[Cannot]),
        ("mutations/25_mode_flag_reassigned", &[Cannot]),
        ("mutations/26_mode_flag_from_another_object", &[Cannot]),
        ("mutations/30_policy_connector_and_settings_renamed", refused),
        ("mutations/31_policy_from_a_constant", &[Cannot]),
        ("mutations/32_policy_from_the_inverted_setting", &[Cannot]),
        ("mutations/33_policy_settings_rebound", &[Cannot]),
        // The access-policy shape (1.0 on): the oracle reads the gate and each helper itself.
        ("ts-access-policy", refused),
        ("access-policy/p01_locals_renamed", refused),
        ("access-policy/p02_reordered_and_commented", refused),
        ("access-policy/p03_policy_literal_allows_all", &[Cannot]),
        ("access-policy/p04_policy_rebound", &[Cannot]),
        ("access-policy/p05_policy_member_written", &[Cannot]),
        ("access-policy/p06_verdict_of_other_text", &[Cannot]),
        ("access-policy/p07_severity_unknown_lowest", &[Cannot]),
        ("access-policy/p08_policy_inverted", &[Cannot]),
        ("access-policy/p09_severity_table_patched", &[Cannot]),
        ("access-policy/p10_statements_iterated_from_a_local", &[Cannot]),
        // The inline-classifier shape (0.13 to 0.15): isReadOnlySQL is the classifier.
        ("bundle-inline-classifier", allowed),
        ("inline-classifier/i01_locals_and_parameters_renamed", allowed),
        ("inline-classifier/i02_reordered_and_commented", allowed),
        // The oracle does not follow what the splitter is given, nor the
        // classifier's early return: these are the compiler's facts; the
        // oracle judges them as the reviewed shape would be judged.
        ("inline-classifier/i03_split_of_a_constant", allowed),
        ("inline-classifier/i04_split_of_the_second_parameter", allowed),
        ("inline-classifier/i05_input_from_another_property", &[Cannot]),
        ("inline-classifier/i06_input_from_a_nested_property", &[Cannot]),
        ("inline-classifier/i07_classifier_lets_everything_through", allowed),
    ];
    for (fixture, expected) in cases {
        check("dbhub-execute-sql", fixture, expected);
    }
}

#[test]
fn an_unknown_profile_is_an_error() {
    let err = judge("nope", &root(), &canonical("git-diff")).unwrap_err();
    assert!(err.contains("git-diff"), "{err}");
}

/// The two routes of the tool name (a `match` case, a decorator
/// registration): their twins judged like their bases, every changed route
/// refused. Each refused case's truth differs from its base's, or fcd
/// escalates it and the oracle cannot follow it either.
#[test]
fn git_diff_routes() {
    let cases: &[(&str, &[Verdict])] = &[
        ("flag-error", GUARDED),
        ("mcp-server", GUARDED),
        ("mcp-server/mcp_twin_renamed_locals", GUARDED),
        ("mcp-server/mcp_twin_reordered_tools", GUARDED),
        // The server object reached through a second name: not followed.
        ("mcp-server/mcp_server_aliased", &[Cannot]),
        ("mcp-server/mcp_wrapper_rewrites_target", &[Cannot]),
        ("mcp-server/mcp_second_decorator", &[Cannot]),
        ("mcp-server/mcp_argument_altered", &[Cannot]),
        ("mcp-server/mcp_registration_names_swapped", &[Cannot]),
        ("mcp-server/mcp_registration_name_computed", &[Cannot]),
        ("mcp-server/mcp_added_by_method", &[Cannot]),
        ("mcp-server/mcp_middleware_rewrites", &[Cannot]),
        ("mcp-server/mcp_lock_rebound", &[Cannot]),
        ("adversarial/surround_route_to_other_function", &[Cannot]),
        ("adversarial/surround_earlier_case_captures", &[Cannot]),
        ("adversarial/surround_second_dispatcher", &[Cannot]),
        ("adversarial/surround_argument_swapped", &[Cannot]),
        ("adversarial/held_argument_map_written", &[Cannot]),
        ("adversarial/held_match_capture_rebinds", &[Cannot]),
        ("adversarial/twin_renamed_local", GUARDED),
        ("adversarial/twin_reformatted", GUARDED),
    ];
    for (fixture, expected) in cases {
        check("git-diff", fixture, expected);
    }
}

/// The legacy-split shapes (0.5 to 0.8): the legacy handler with
/// areAllStatementsReadOnly, and a connector that cuts the SQL at `;` and
/// runs a single statement in its own branch, which decides call B.
#[test]
fn dbhub_legacy_split() {
    let reader: &[Verdict] = &[Safe, Safe, Safe, Unknown];
    let runs: &[Verdict] = &[Safe, Unsafe, Safe, Unknown];
    let cases: &[(&str, &[Verdict])] = &[
        ("ts-legacy-split", reader),
        ("legacy-split/s01_commented", reader),
        ("legacy-split/s10_single_statement_runs", runs),
        // A branch the oracle does not read (`<= 2`): it refuses rather than guess.
        ("legacy-split/s11_single_branch_for_two", &[Cannot]),
        ("legacy-split/s20_run_variant", runs),
    ];
    for (fixture, expected) in cases {
        check("dbhub-execute-sql", fixture, expected);
    }
}

/// The legacy-single-reader shape (0.4): the older handler, its mode flag
/// isReadOnlyMode(), and the SQLite connector's executeSQL, which decides what
/// an admitted PRAGMA assignment does (all() refuses it: safe).
#[test]
fn dbhub_legacy_reader() {
    let reader: &[Verdict] = &[Safe, Safe, Safe, Unknown];
    let runs: &[Verdict] = &[Safe, Unsafe, Safe, Unknown];
    let cases: &[(&str, &[Verdict])] = &[
        ("ts-legacy-reader", reader),
        ("legacy-reader/l01_locals_renamed", reader),
        ("legacy-reader/l02_reordered_and_commented", reader),
        // The connector runs what it is given: the oracle judges the write fcd escalates on.
        ("legacy-reader/l10_connector_runs", runs),
        ("legacy-reader/l11_connector_execs_first", runs),
        ("legacy-reader/l12_subclass_overrides", &[Cannot]),
        ("legacy-reader/l13_instance_method_replaced", &[Cannot]),
        ("legacy-reader/l14_field_beside_method", &[Cannot]),
        ("legacy-reader/l15_prototype_patched", &[Cannot]),
        ("legacy-reader/l16_accessor_of_the_name", &[Cannot]),
        ("legacy-reader/l17_mode_always_off", &[Cannot]),
        // The same handler registered twice serves the same calls: judged like the fixture.
        ("legacy-reader/l18_handler_registered_twice", reader),
        ("legacy-reader/l19_handler_wrapped", &[Cannot]),
    ];
    for (fixture, expected) in cases {
        check("dbhub-execute-sql", fixture, expected);
    }
}

const INDEX: &[Verdict] = &[Unknown, Unsafe, Unknown];
const CLI: &[Verdict] = &[Safe, Safe, Safe];

/// git_add's shapes and their mutations: every change of the sink, the
/// list or the route is refused; twins and decoys are judged like their base.
#[test]
fn git_add_shapes_and_mutations() {
    let cases: &[(&str, &[Verdict])] = &[
        ("index", INDEX),
        ("cli", CLI),
        ("mutations/01_cli_without_dashdash", &[Cannot]),
        ("mutations/02_cli_option_before_dashdash", &[Cannot]),
        ("mutations/03_cli_option_after_the_paths", &[Cannot]),
        ("mutations/04_cli_dashdash_from_a_constant", &[Cannot]),
        ("mutations/05_cli_files_rebound", &[Cannot]),
        ("mutations/06_cli_list_instead_of_splat", &[Cannot]),
        ("mutations/07_cli_two_sinks", &[Cannot]),
        ("mutations/08_cli_stage_all_with_option", &[Cannot]),
        ("mutations/09_cli_index_beside", &[Cannot]),
        ("mutations/10_cli_dynamic_sink", &[Cannot]),
        ("mutations/11_cli_without_stage_all", CLI),
        ("mutations/12_cli_comment_control", CLI),
        ("mutations/20_index_keyword", &[Cannot]),
        ("mutations/21_index_slice", &[Cannot]),
        ("mutations/22_index_splat_beside", &[Cannot]),
        // The list handed to another call could change: refused (fcd escalates on the callee).
        ("mutations/23_index_added_filesystem_call", &[Cannot]),
        ("mutations/24_index_missing_sink", &[Cannot]),
        ("mutations/25_index_region_renamed", &[Cannot]),
        // Identities are the call-site guard's business: the oracle judges the flow.
        ("mutations/26_index_unresolved_receiver", INDEX),
        ("adversarial/surround_library_patched", &[Cannot]),
        ("adversarial/surround_dispatcher_stages_itself", &[Cannot]),
        ("adversarial/surround_route_passes_other_argument", &[Cannot]),
        ("adversarial/held_argument_map_written", &[Cannot]),
        ("adversarial/surround_decorator_on_handler", &[Cannot]),
        ("adversarial/names_lookalike_import", &[Cannot]),
        ("adversarial/decoy_dashdash_in_comment", INDEX),
        ("adversarial/decoy_splat_in_uncalled_function", INDEX),
        ("adversarial/twin_renamed_locals", CLI),
        // The loop that refuses paths outside the tree, and the helper that
        // lists index entries around staging: both change no effect.
        ("confined", CLI),
        ("counted", CLI),
        ("mcp-server", CLI),
        ("mutations/30_confined_loop_touches_the_file", &[Cannot]),
        ("mutations/31_confined_loop_extends_the_list", &[Cannot]),
        ("mutations/32_counted_helper_stages", &[Cannot]),
        ("mutations/33_counted_helper_without_dashdash", &[Cannot]),
    ];
    for (fixture, expected) in cases {
        check("git-add", fixture, expected);
    }
}

/// Calls beyond the canonical ones: the index judged by path segment, any
/// element that is not a string unknown, git confining every path.
#[test]
fn git_add_paths() {
    let call = |files: serde_json::Value| {
        let mut doc = canonical("git-add");
        doc["calls"] = serde_json::json!({ "X": { "arguments": { "repo_path": "/srv/repo", "files": files } } });
        doc
    };
    let verdict =
        |fixture: &str, files: serde_json::Value| judge("git-add", &root().join("fixtures/git-add").join(fixture), &call(files)).unwrap()[0].verdict.clone();
    assert_eq!(verdict("index", serde_json::json!([".git/config"])), Unsafe);
    assert_eq!(verdict("index", serde_json::json!(["vendor/.GIT/hooks/x"])), Unsafe);
    assert_eq!(verdict("index", serde_json::json!(["docs/../../key"])), Unsafe);
    assert_eq!(verdict("index", serde_json::json!([".../x", "a..b"])), Unknown);
    assert_eq!(verdict("index", serde_json::json!([])), Unknown);
    assert_eq!(verdict("index", serde_json::json!(["README.md", 7])), Unknown);
    assert_eq!(verdict("cli", serde_json::json!([".git/config", "../x", "-A"])), Safe);
    assert_eq!(verdict("cli", serde_json::json!([])), Safe);
    assert_eq!(verdict("cli", serde_json::json!(["README.md", 7])), Unknown);
}

#[test]
fn filesystem_write_file_shape_and_mutations() {
    const BOUNDARY: &[Verdict] = &[Safe, Reject, Reject];
    const PREFIX: &[Verdict] = &[Unknown, Unsafe, Reject];
    let cases: &[(&str, &[Verdict])] = &[
        ("boundary", BOUNDARY),
        // Every mutation the compiler escalates, the oracle refuses as well,
        // except 08, whose module-level assignment the setter overwrites at
        // startup: the oracle refuses it too (the list is assigned twice).
        ("mutations/01_unchecked_write", &[Cannot]),
        ("mutations/02_checked_then_ignored", &[Cannot]),
        ("mutations/03_string_prefix_containment", &[Cannot]),
        ("mutations/04_links_not_resolved", &[Cannot]),
        ("mutations/05_link_error_swallowed", &[Cannot]),
        ("mutations/06_write_follows_links", &[Cannot]),
        ("mutations/07_second_registration", &[Cannot]),
        ("mutations/08_directories_widened", &[Cannot]),
        ("mutations/09_setter_widens", &[Cannot]),
        ("mutations/10_comment_spoof", &[Cannot]),
        ("mutations/11_another_argument_checked", &[Cannot]),
        ("mutations/12_fs_patched", &[Cannot]),
        ("mutations/13_twin_renamed_and_commented", BOUNDARY),
        ("mutations/14_twin_function_expression", BOUNDARY),
        ("adversarial/surround_prototype_patched", &[Cannot]),
        ("adversarial/surround_state_pushed", &[Cannot]),
        ("adversarial/surround_tool_name_computed", &[Cannot]),
        ("adversarial/surround_write_in_try_swallowed", &[Cannot]),
        // The dispatcher shape with a string-prefix check: a sibling named like
        // the directory is written, a path inside may follow a link out.
        ("prefix", PREFIX),
        ("mutations/15_prefix_parsed_rebound", &[Cannot]),
        ("mutations/16_prefix_arguments_from_elsewhere", &[Cannot]),
        ("mutations/17_prefix_second_case", &[Cannot]),
        ("mutations/18_prefix_check_after_write", &[Cannot]),
        ("mutations/19_prefix_test_replaced", &[Cannot]),
        // A `name:` entry anywhere is data to the oracle, which judges the flow; fcd escalates.
        ("mutations/20_prefix_listing_in_the_call_handler", PREFIX),
        ("mutations/21_prefix_second_handler_aliased", &[Cannot]),
        ("mutations/22_prefix_list_handler_widens", &[Cannot]),
        ("mutations/23_prefix_logger_replaced", &[Cannot]),
        ("mutations/24_prefix_schema_printer_of_the_release", &[Cannot]),
        ("mutations/25_prefix_twin_renamed_and_commented", PREFIX),
        ("adversarial/surround_prefix_list_aliased", &[Cannot]),
        ("adversarial/surround_prefix_request_rebound", &[Cannot]),
        // The dispatchers with the boundary check: lib.js's writer, or the case's own exclusive write.
        ("dispatch", BOUNDARY),
        ("inline", BOUNDARY),
        ("mutations/26_dispatch_checked_then_ignored", &[Cannot]),
        ("mutations/27_inline_not_exclusive", &[Cannot]),
        ("mutations/28_inline_renamed_to_the_raw_path", &[Cannot]),
        // The prefix shape folded to lower case (0.5.1, 0.6.2): for the
        // canonical lower-case calls, the plain prefix test.
        ("casefold", PREFIX),
        ("mutations/29_casefold_folds_upward", &[Cannot]),
        ("mutations/30_casefold_fold_removed", PREFIX),
        // The inline dispatcher whose list the client's roots replace (2025.7.29, 2025.8.18).
        ("roots", BOUNDARY),
        // The oracle does not read expandHome (the canonical paths are absolute,
        // which path-utils.js's leaves alone too); fcd escalates, as its region
        // reads the entry's own.
        ("mutations/31_roots_entry_takes_the_shared_expand", BOUNDARY),
        // A normalization more of what roots-utils.js returns changes no verdict: the oracle
        // reads only that the file writes nothing and the entry copies what it returns.
        ("mutations/32_roots_shared_normalize_reached", BOUNDARY),
        ("mutations/33_roots_list_widened_elsewhere", &[Cannot]),
        ("mutations/34_roots_unvalidated_roots_kept", &[Cannot]),
        // The walked shape (2026.8.31): a missing path walked by names equal
        // under NFC, each step resolved and checked; the canonical calls hold no `K`.
        ("unicode", BOUNDARY),
        ("mutations/35_unicode_step_unchecked", &[Cannot]),
        ("mutations/36_unicode_steps_not_resolved", &[Cannot]),
        ("mutations/37_unicode_missing_path_returned_unwalked", &[Cannot]),
        ("mutations/38_unicode_chmod_opens_the_folder", &[Cannot]),
        ("mutations/39_unicode_chmod_replaced_by_chown", &[Cannot]),
        ("mutations/40_unicode_twin_renamed_and_commented", BOUNDARY),
        ("adversarial/surround_unicode_normalize_patched", &[Cannot]),
        ("adversarial/surround_unicode_list_sorted_elsewhere", &[Cannot]),
        // The 2.x layout (2.0.1): the factory's own list, the roots barrier
        // around registerTool, a refused path respelled, the write anchored.
        ("factory", BOUNDARY),
        ("adversarial/factory_list_pushed_by_another_tool", &[Cannot]),
        ("adversarial/factory_list_replaced_outside_the_updater", &[Cannot]),
        ("adversarial/factory_list_handed_to_unread_code", &[Cannot]),
        ("adversarial/factory_list_escapes_in_an_object", &[Cannot]),
        ("adversarial/factory_anchor_moved", &[Cannot]),
        ("adversarial/factory_wrapper_rewrites_arguments", &[Cannot]),
        // The oracle reads no process state outside the anchored helpers; fcd escalates the chdir.
        ("adversarial/factory_chdir_at_startup", BOUNDARY),
        // A parameter of the list's name in a nested function is, to the oracle's
        // tokens, the list used otherwise: it refuses, as fcd does (the wrapper's digest).
        ("adversarial/factory_list_shadowed_in_a_helper", &[Cannot]),
    ];
    for (fixture, expected) in cases {
        check("filesystem-write-file", fixture, expected);
    }
}

#[test]
fn filesystem_write_file_paths() {
    let call = |path: &str, dirs: serde_json::Value| {
        let mut doc = canonical("filesystem-write-file");
        doc["env"]["config"]["allowed_directories"] = dirs;
        doc["calls"] = serde_json::json!({ "X": { "arguments": { "path": path, "content": "x" } } });
        doc
    };
    let verdict = |path: &str, dirs: serde_json::Value| {
        judge("filesystem-write-file", &root().join("fixtures/filesystem-write-file/boundary"), &call(path, dirs)).unwrap()[0].verdict.clone()
    };
    let one = || serde_json::json!("/srv/data");
    assert_eq!(verdict("/srv/data/a/b.txt", one()), Safe);
    assert_eq!(verdict("/srv/database", one()), Reject);
    assert_eq!(verdict("/srv/data/../../etc/passwd", one()), Reject);
    assert_eq!(verdict("/srv/data", one()), Unknown);
    assert_eq!(verdict("/srv/data/", one()), Unknown);
    assert_eq!(verdict("/srv/data/../data/x", one()), Unknown);
    assert_eq!(verdict("notes.txt", one()), Unknown);
    assert_eq!(verdict("~/notes.txt", one()), Unknown);
    assert_eq!(verdict("/srv/data/x ", one()), Unknown);
    assert_eq!(verdict("/srv/data/x", serde_json::json!(["/srv/data", "/srv/other"])), Unknown);
    // A directory the contract's write scopes do not hold: the write leaves the contract.
    assert_eq!(verdict("/srv/other/x", serde_json::json!("/srv/other")), Unsafe);
    // The string-prefix shape: no `/` boundary, and inside is never certain.
    let prefix =
        |path: &str| judge("filesystem-write-file", &root().join("fixtures/filesystem-write-file/prefix"), &call(path, one())).unwrap()[0].verdict.clone();
    assert_eq!(prefix("/srv/data/a/b.txt"), Unknown);
    assert_eq!(prefix("/srv/database"), Unsafe);
    assert_eq!(prefix("/srv/data2/x/y"), Unsafe);
    assert_eq!(prefix("/srv/dat"), Reject);
    assert_eq!(prefix("/srv/data/../../etc/passwd"), Reject);
    assert_eq!(prefix("/srv/data/../data2/x"), Unknown);
    assert_eq!(prefix("notes.txt"), Unknown);
    // Folded to lower case: a path or directory that folding changes is another string to the check.
    let folded = |path: &str, dirs: serde_json::Value| {
        judge("filesystem-write-file", &root().join("fixtures/filesystem-write-file/casefold"), &call(path, dirs)).unwrap()[0].verdict.clone()
    };
    assert_eq!(folded("/srv/data2/x", one()), Unsafe);
    assert_eq!(folded("/srv/dat", one()), Reject);
    assert_eq!(folded("/SRV/DATA/x", one()), Unknown);
    assert_eq!(folded("/srv/data/x", serde_json::json!("/srv/Data")), Unknown);
    // The walked shape: a `K` below the directory may be walked to its Kelvin-sign twin.
    let walked = |path: &str, dirs: serde_json::Value| {
        judge("filesystem-write-file", &root().join("fixtures/filesystem-write-file/unicode"), &call(path, dirs)).unwrap()[0].verdict.clone()
    };
    assert_eq!(walked("/srv/data/a/b.txt", one()), Safe);
    assert_eq!(walked("/srv/data/kelvin.txt", one()), Safe);
    assert_eq!(walked("/srv/data/Kelvin.txt", one()), Unknown);
    assert_eq!(walked("/srv/data/KPI/q1.csv", one()), Unknown);
    assert_eq!(walked("/srv/Kdata/x", one()), Reject);
    assert_eq!(walked("/srv/data/../../etc/K", one()), Reject);
    // A `K` in the directory itself is not walked: the contract decides (it holds /srv/data only).
    assert_eq!(walked("/srv/Kdata/x", serde_json::json!("/srv/Kdata")), Unsafe);
    // The 2.x layout: as walked; a directory outside plain characters (which a
    // refused path may be respelled into) is never decided.
    let factory = |path: &str, dirs: serde_json::Value| {
        judge("filesystem-write-file", &root().join("fixtures/filesystem-write-file/factory"), &call(path, dirs)).unwrap()[0].verdict.clone()
    };
    assert_eq!(factory("/srv/data/a/b.txt", one()), Safe);
    assert_eq!(factory("/srv/data/Kelvin.txt", one()), Unknown);
    assert_eq!(factory("/srv/data2/x", one()), Reject);
    assert_eq!(factory("/srv/Kelvin/x", serde_json::json!("/srv/\u{212A}elvin")), Unknown);
}

#[test]
fn filesystem_move_file_shapes_and_mutations() {
    // Canonical calls A (both ends inside), B (destination in a sibling), C (source in a sibling), D (a climb out), E (/etc/passwd in).
    const BOUNDARY: &[Verdict] = &[Safe, Reject, Reject, Reject, Reject];
    const PREFIX: &[Verdict] = &[Unknown, Unsafe, Unsafe, Reject, Reject];
    let mut cases: Vec<(&str, &[Verdict])> = vec![
        ("boundary", BOUNDARY),
        ("dispatch", BOUNDARY),
        ("entry", BOUNDARY),
        // The entry shape whose list the client's roots replace (2025.7.29, 2025.8.18).
        ("roots", BOUNDARY),
        ("prefix", PREFIX),
        ("casefold", PREFIX),
        ("mutations/12_twin_renamed_and_commented", BOUNDARY),
        ("mutations/13_twin_destination_checked_first", BOUNDARY),
        // The ends swapped: the oracle, like the profile, names both ends alike.
        ("mutations/14_twin_ends_swapped", BOUNDARY),
        ("mutations/19_casefold_fold_removed", PREFIX),
        // The walked shape (2026.8.31), moving through lib.js's moveFile.
        ("unicode", BOUNDARY),
        ("mutations/30_unicode_twin_commented", BOUNDARY),
        // moveFile's lstat only refuses moves: without it, or whatever its
        // failure, the rename of the two checked ends is still all that
        // happens, inside the directory; fcd escalates the unreviewed bodies.
        ("mutations/26_unicode_move_without_lstat", BOUNDARY),
        ("mutations/27_unicode_lstat_failure_ignored", BOUNDARY),
        // The handler renaming the checked ends itself, as before 2026.8.31.
        ("mutations/28_unicode_handler_renames_itself", BOUNDARY),
        // The 2.x layout (2.0.1): both ends against the factory's own list, the rename anchored.
        ("factory", BOUNDARY),
    ];
    // Every mutation and adversarial case the compiler escalates, the oracle refuses as well.
    for refused in [
        "mutations/01_source_unchecked",
        "mutations/02_destination_checked_then_ignored",
        "mutations/03_source_checked_twice",
        "mutations/04_third_check_of_another_value",
        "mutations/05_string_prefix_containment",
        "mutations/06_links_not_resolved",
        "mutations/07_second_registration",
        "mutations/08_setter_widens",
        "mutations/09_copy_instead_of_rename",
        "mutations/10_rename_then_cleanup",
        "mutations/11_comment_spoof",
        "mutations/15_prefix_rename_before_checks",
        "mutations/16_prefix_second_case",
        "mutations/17_prefix_arguments_from_elsewhere",
        "mutations/18_prefix_schema_widened",
        "mutations/20_dispatch_destination_raw",
        "mutations/21_entry_list_widened",
        "mutations/22_entry_check_loosened",
        "mutations/23_roots_list_widened_elsewhere",
        "mutations/24_roots_unvalidated_roots_kept",
        "adversarial/surround_prototype_patched",
        "adversarial/surround_rename_replaced",
        "adversarial/surround_state_pushed",
        "adversarial/surround_tool_name_computed",
        "adversarial/surround_refusal_swallowed",
        "adversarial/surround_arguments_rebound",
        "adversarial/surround_prefix_list_aliased",
        "adversarial/surround_prefix_second_handler_aliased",
        "mutations/25_unicode_step_unchecked",
        "mutations/29_unicode_missing_end_returned_unwalked",
        "adversarial/surround_unicode_normalize_patched",
        "adversarial/surround_unicode_lstat_replaced",
        "adversarial/factory_list_pushed_by_another_tool",
        "adversarial/factory_rename_anchored_elsewhere",
    ] {
        cases.push((refused, &[Cannot]));
    }
    for (fixture, expected) in cases {
        check("filesystem-move-file", fixture, expected);
    }
}

#[test]
fn filesystem_move_file_twins() {
    let verdict = |source: &str, destination: &str| {
        let mut doc = canonical("filesystem-move-file");
        doc["calls"] = serde_json::json!({ "X": { "arguments": { "source": source, "destination": destination } } });
        judge("filesystem-move-file", &root().join("fixtures/filesystem-move-file/unicode"), &doc).unwrap()[0].verdict.clone()
    };
    assert_eq!(verdict("/srv/data/kelvin.txt", "/srv/data/archive/kelvin.txt"), Safe);
    assert_eq!(verdict("/srv/data/Kelvin.txt", "/srv/data/archive/kelvin.txt"), Unknown);
    assert_eq!(verdict("/srv/data/report.txt", "/srv/data/KPI/report.txt"), Unknown);
    assert_eq!(verdict("/srv/data/report.txt", "/srv/Kdata/report.txt"), Reject);
    assert_eq!(verdict("/etc/Kerberos.conf", "/srv/data/krb.conf"), Reject);
}
