//! The registry: every NF's configuration reads back what it writes, and a
//! bad one is refused by the field at fault.

use sluice_nf::NfSpec;

fn read(json: &str) -> Result<NfSpec, String> {
    serde_json::from_str(json).map_err(|e| e.to_string())
}

#[test]
fn a_configuration_reads_back_what_it_writes() {
    let samples: Vec<NfSpec> = NfSpec::fuzz_samples().into_iter().chain(NfSpec::KINDS.iter().filter_map(|k| NfSpec::profiling(k, 1))).collect();
    assert!(samples.len() > 20);
    for spec in samples {
        let json = serde_json::to_string(&spec).unwrap();
        assert!(json.contains(&format!(r#""type":"{}""#, spec.kind())), "{json}");
        assert_eq!(read(&json).unwrap(), spec, "{json}");
        spec.build_on(&sluice_nf::Interfaces::sample()).unwrap_or_else(|e| panic!("{json}: {e}"));
    }
}

#[test]
fn defaults_fill_what_a_description_leaves_out() {
    let NfSpec::Napt(napt) = read(r#"{"type": "napt", "inside": "10.0.0.0/8", "public": "192.0.2.1"}"#).unwrap() else { panic!("not a napt") };
    assert_eq!((napt.first_port, napt.last_port, napt.timeout_s), (1024, 65535, 30.0));
    let NfSpec::TypeCheck(check) = read(r#"{"type": "type_check"}"#).unwrap() else { panic!("not a type check") };
    assert_eq!(check.ether_type, 0x0800);
}

#[test]
fn a_bad_field_is_named() {
    let err = read(r#"{"type": "vlan_push", "vlan": -1}"#).unwrap_err();
    assert!(err.starts_with("vlan: invalid value: integer `-1`, expected u16"), "{err}");
    let err = read(r#"{"type": "reframer", "t_buff_us": 10, "bypass": {"dscp": [300]}}"#).unwrap_err();
    assert!(err.starts_with("bypass.dscp[0]: invalid value: integer `300`"), "{err}");
    let err = read(r#"{"type": "vlan_push", "vlam": 7}"#).unwrap_err();
    assert!(err.starts_with("unknown field `vlam`, expected `vlan`"), "{err}");
    let err = read(r#"{"type": "ip_checksum", "ttl": 1}"#).unwrap_err();
    assert!(err.starts_with("unknown field `ttl`, there are no fields"), "{err}");
}

#[test]
fn an_unknown_or_missing_type_is_refused() {
    let err = read(r#"{"type": "lmp", "routes": []}"#).unwrap_err();
    assert!(err.starts_with("unknown variant `lmp`, expected one of `bypass`"), "{err}");
    assert!(read(r#"{"routes": []}"#).unwrap_err().starts_with("missing field `type`"));
    assert!(read(r#"{"type": 7}"#).unwrap_err().starts_with("`type` must be an NF's name, not 7"));
}

#[test]
fn every_nf_has_a_schema_whose_properties_are_its_fields() {
    let schemas = NfSpec::schemas();
    assert_eq!(schemas.len(), NfSpec::KINDS.len());
    let (_, class, lpm) = schemas.iter().find(|(kind, ..)| *kind == "lpm").unwrap();
    assert_eq!(*class, "Lpm");
    assert_eq!(lpm["required"], serde_json::json!(["routes"]));
    assert!(lpm["description"].as_str().unwrap().starts_with("`lpm`: longest-prefix match"));
}
