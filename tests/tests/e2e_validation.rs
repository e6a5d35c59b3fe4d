//! Differential test of local validation: for a few hundred generated
//! objects of a kind carrying one of each validation marker (the tests
//! crate's `validation` fixture) — valid ones, and ones just across each
//! boundary — the generated `Probe::validate()` gives the same verdict, the
//! same field paths, reasons and messages as the real kube-apiserver's
//! dry-run create of the same object, CEL rules included (the runtime's
//! feature `cel`); `validate_update(old)` agrees with dry-run updates of
//! created objects, transition rules included. The agreement rates are
//! printed; the target, met here, is 100%.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};
use codegen_testenv::TestEnv;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube_codegen_tests::validation::apis::lab::v1::{Choice, Limits, NamedPort, Probe, ProbeSpec};

/// A field error as a triple: field, reason, message.
type Cause = (String, String, String);

/// A small deterministic generator (the same objects every run).
struct Lcg(u64);

impl Lcg {
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        &items[((self.0 >> 33) % items.len() as u64) as usize]
    }
}

fn port(name: &str, number: i32) -> NamedPort {
    NamedPort { name: name.into(), number }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// How many candidates of each field, at the front of its list, are valid.
const VALID: usize = 3;

/// Candidate values per field, `VALID` valid ones first, then each boundary
/// crossed.
struct Candidates {
    replicas: Vec<Option<i32>>,
    port: Vec<i32>,
    percent: Vec<Option<i64>>,
    name: Vec<&'static str>,
    mode: Vec<Option<&'static str>>,
    tags: Vec<Vec<String>>,
    ports: Vec<Option<Vec<NamedPort>>>,
    labels: Vec<BTreeMap<String, String>>,
    limits: Vec<Option<Limits>>,
    choice: Vec<Option<Choice>>,
}

fn candidates() -> Candidates {
    let labels = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let limits = |cpu: i64, classes: &[&str]| Some(Limits { cpu_millis: cpu, classes: strings(classes) });
    Candidates {
        replicas: vec![None, Some(1), Some(10), Some(0), Some(11), Some(-5)],
        port: vec![80, 1, 65535, 0, 65536, 22],
        percent: vec![None, Some(5), Some(95), Some(0), Some(7), Some(100), Some(105), Some(-5)],
        name: vec!["web", "a", "abcdefgh", "", "abcdefghi", "Abc", "1ab", "a_b", "é", "abcdéfgh", "abcdéfghi"],
        mode: vec![None, Some("fast"), Some("slow"), Some("Fast"), Some("")],
        tags: vec![
            vec![],
            strings(&["a"]),
            strings(&["a", "b", "c"]),
            strings(&["a", "a"]),
            strings(&["a", "b", "c", "d"]),
            strings(&["toolong"]),
            strings(&["a", "b", "a", "toolong"]),
        ],
        ports: vec![
            None,
            Some(vec![port("a", 80)]),
            Some(vec![port("a", 80), port("b", 80)]),
            Some(vec![]),
            Some(vec![port("a", 80), port("a", 81)]),
            Some(vec![port("a", 0)]),
            Some(vec![port("a", 0), port("a", 70000)]),
        ],
        labels: vec![
            BTreeMap::new(),
            labels(&[("a", "x")]),
            labels(&[("a", "x"), ("b", "yyyy")]),
            labels(&[("a", "x"), ("b", "y"), ("c", "z")]),
            labels(&[("a", "toolong")]),
        ],
        limits: vec![
            None,
            limits(0, &["ab"]),
            limits(1000000, &["ab"]),
            // No `classes`: the rule reads a key the object lacks, an
            // evaluation error the server reports.
            limits(0, &[]),
            limits(-1, &[]),
            limits(1000001, &[]),
            limits(5, &["ab", "c"]),
            limits(5, &["ab", "cd", "ef"]),
        ],
        choice: vec![
            None,
            choice(Some("a"), None, Some(1)),
            choice(None, Some(3), None),
            choice(None, None, Some(1)),
            choice(Some("a"), Some(3), None),
        ],
    }
}

fn choice(namespace: Option<&str>, max_size: Option<i32>, in_: Option<i32>) -> Option<Choice> {
    Some(Choice { namespace: namespace.map(str::to_string), max_size, in_ })
}

fn probe(
    name: &str,
    c: &Candidates,
    i: [usize; 10], // index into each candidate list
) -> Probe {
    let mut p = Probe::new(
        name,
        ProbeSpec {
            replicas: c.replicas[i[0]],
            port: c.port[i[1]],
            percent: c.percent[i[2]],
            name: c.name[i[3]].into(),
            mode: c.mode[i[4]].map(str::to_string),
            tags: c.tags[i[5]].clone(),
            ports: c.ports[i[6]].clone(),
            labels: c.labels[i[7]].clone(),
            limits: c.limits[i[8]].clone(),
            choice: c.choice[i[9]].clone(),
        },
    );
    p.metadata.name = Some(name.into());
    p
}

/// The valid object, every field varied alone, then random mixes.
fn objects() -> Vec<Probe> {
    let c = candidates();
    let lens = [
        c.replicas.len(),
        c.port.len(),
        c.percent.len(),
        c.name.len(),
        c.mode.len(),
        c.tags.len(),
        c.ports.len(),
        c.labels.len(),
        c.limits.len(),
        c.choice.len(),
    ];
    let mut out = Vec::new();
    for (field, len) in lens.iter().enumerate() {
        for value in 0..*len {
            let mut idx = [0; 10];
            idx[field] = value;
            out.push(probe(&format!("p{}", out.len()), &c, idx));
        }
    }
    let mut rng = Lcg(0x5eed);
    for _ in 0..150 {
        let mut idx = [0; 10];
        for (field, len) in lens.iter().enumerate() {
            // Mostly valid values (the first VALID of each list), so that a
            // good share of the mixes is valid as a whole.
            let valid: Vec<usize> = (0..VALID).collect();
            let any: Vec<usize> = (0..*len).collect();
            idx[field] =
                if *rng.pick(&[true, true, true, true, true, false]) { *rng.pick(&valid) } else { *rng.pick(&any) };
        }
        out.push(probe(&format!("p{}", out.len()), &c, idx));
    }
    out
}

fn ours(p: &Probe) -> Vec<Cause> {
    let mut causes: Vec<Cause> = match p.validate() {
        Ok(()) => Vec::new(),
        Err(errors) => errors.0.into_iter().map(|e| (e.field, e.reason.to_string(), e.message)).collect(),
    };
    causes.sort();
    causes
}

fn ours_update(p: &Probe, old: &Probe) -> Vec<Cause> {
    let mut causes: Vec<Cause> = match p.validate_update(old) {
        Ok(()) => Vec::new(),
        Err(errors) => errors.0.into_iter().map(|e| (e.field, e.reason.to_string(), e.message)).collect(),
    };
    causes.sort();
    causes
}

/// The causes of the server's 422 for a dry-run create (or, with
/// `resource_version`, a dry-run update) of `p`.
async fn servers(api: &Api<DynamicObject>, p: &Probe, resource_version: Option<&str>) -> Result<Vec<Cause>> {
    let mut object: DynamicObject = serde_json::from_value(serde_json::to_value(p)?)?;
    let params = PostParams { dry_run: true, ..PostParams::default() };
    let result = match resource_version {
        None => api.create(&params, &object).await,
        Some(rv) => {
            object.metadata.resource_version = Some(rv.to_string());
            api.replace(p.metadata.name.as_deref().unwrap_or_default(), &params, &object).await
        }
    };
    let mut causes = match result {
        Ok(_) => Vec::new(),
        Err(kube::Error::Api(status)) if status.code == 422 => status
            .details
            .map(|d| d.causes.into_iter().map(|c| (c.field, c.reason, c.message)).collect())
            .unwrap_or_default(),
        Err(e) => return Err(e).context("dry-run create"),
    };
    causes.sort();
    Ok(causes)
}

#[tokio::test]
async fn local_validation_agrees_with_the_api_server() -> Result<()> {
    let env = TestEnv::shared();
    let crd_dir = std::path::Path::new(kube_codegen_tests::validation::CRD_DIR);
    env.kubectl_apply_file(&crd_dir.join("lab.kube-codegen.test_probes.yaml"))?;
    env.wait_crd_established("probes.lab.kube-codegen.test", Duration::from_secs(60)).await?;
    let ns = env.create_namespace("validation").await?;
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("lab.kube-codegen.test", "v1", "Probe"), "probes");
    let api: Api<DynamicObject> = Api::namespaced_with(env.admin_client().await?, &ns, &resource);

    let objects = objects();
    let mut agree = 0;
    let mut invalid = 0;
    let mut mismatches = Vec::new();
    for p in &objects {
        let theirs = servers(&api, p, None).await?;
        let mine = ours(p);
        invalid += usize::from(!theirs.is_empty());
        if theirs == mine {
            agree += 1;
        } else {
            mismatches.push(format!("{:?}\n  server: {theirs:?}\n  ours:   {mine:?}", p.spec));
        }
    }
    println!(
        "local validation vs kube-apiserver: {agree}/{} objects agree ({invalid} invalid ones among them)",
        objects.len()
    );
    // Updates: valid objects are created, then each is replaced (dry run)
    // by variants: renamed (the immutability rule), with fields made
    // invalid, with a mode in the wrong case, unchanged; `validate_update`
    // must agree with each verdict.
    let mut updates = 0;
    let mut update_mismatches = Vec::new();
    let mut valid: Vec<&Probe> = objects.iter().filter(|p| ours(p).is_empty()).take(20).collect();
    let with_choice: Vec<&Probe> = objects
        .iter()
        .filter(|p| p.spec.choice.is_some() && ours(p).is_empty() && !valid.contains(p))
        .take(6)
        .collect();
    assert!(with_choice.len() >= 4, "{} valid objects with a choice", with_choice.len());
    valid.extend(with_choice);
    for old in valid {
        let created = api
            .create(&PostParams::default(), &serde_json::from_value(serde_json::to_value(old)?)?)
            .await
            .context("create")?;
        let rv = created.metadata.resource_version.clone().context("resourceVersion")?;
        let mut variants = vec![old.clone()];
        let mut renamed = old.clone();
        renamed.spec.name = format!("{}x", old.spec.name.chars().take(6).collect::<String>());
        variants.push(renamed);
        let mut bad = old.clone();
        bad.spec.replicas = Some(11);
        bad.spec.port = 22;
        variants.push(bad);
        let mut mode = old.clone();
        mode.spec.mode = Some("Slow".into());
        variants.push(mode);
        // The immutable `in` (named `__in__` by the rules) changed, and
        // removed; the choice switched.
        if let Some(c) = &old.spec.choice {
            let mut changed = old.clone();
            changed.spec.choice = choice(c.namespace.as_deref(), c.max_size, Some(c.in_.unwrap_or(0) + 1));
            variants.push(changed);
            let mut removed = old.clone();
            removed.spec.choice = choice(c.namespace.as_deref(), c.max_size, None);
            variants.push(removed);
            let mut switched = old.clone();
            switched.spec.choice = match c.namespace {
                Some(_) => choice(None, Some(4), c.in_),
                None => choice(Some("b"), None, c.in_),
            };
            variants.push(switched);
        }
        for new in &variants {
            updates += 1;
            let theirs = servers(&api, new, Some(&rv)).await?;
            let mine = ours_update(new, old);
            if theirs != mine {
                update_mismatches
                    .push(format!("{:?} -> {:?}\n  server: {theirs:?}\n  ours:   {mine:?}", old.spec, new.spec));
            }
        }
    }
    println!("validate_update vs kube-apiserver: {}/{updates} updates agree", updates - update_mismatches.len());
    assert!(updates >= 40, "{updates} updates");
    assert!(
        update_mismatches.is_empty(),
        "{} disagreements:\n{}",
        update_mismatches.len(),
        update_mismatches.join("\n")
    );

    // Both verdicts are well represented.
    assert!(invalid >= objects.len() / 3 && invalid <= objects.len() * 4 / 5, "{invalid} of {} invalid", objects.len());
    assert!(mismatches.is_empty(), "{} disagreements:\n{}", mismatches.len(), mismatches.join("\n"));
    Ok(())
}
