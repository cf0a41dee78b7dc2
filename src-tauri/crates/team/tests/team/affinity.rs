//! One conversation stays on one key whichever member serves it, and follows its key when one
//! member moves it.

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_conversation_alternating_between_the_members_stays_on_one_key() {
    let rig = Rig::start(&["x", "y", "z"]).await;
    // B's rotation moves on, so a conversation new to B would start on another key than on A.
    assert_eq!(rig.ask(&rig.b, "another").await.0, 200, "B serves another conversation first (on x)");
    for turn in 0..6 {
        let member = if turn % 2 == 0 { &rig.a } else { &rig.b };
        assert_eq!(rig.ask(member, "the-conversation").await.0, 200, "turn {turn} is answered");
    }
    let mut served = rig.a.served("the-conversation");
    served.extend(rig.b.served("the-conversation"));
    assert_eq!(served.len(), 6, "six turns were answered: {served:?}");
    assert!(served.iter().all(|label| *label == served[0]), "every turn went to one key: {served:?}");

    // The key refuses on A: A moves the conversation, and B follows it there.
    let first = served[0].clone();
    rig.fake.script(&key(&first), [Reply::status_with(429, &[("retry-after", "30")])]);
    assert_eq!(rig.ask(&rig.a, "the-conversation").await.0, 200, "A fails over");
    let moved = rig.a.served("the-conversation").last().cloned().expect("A answered");
    assert_ne!(moved, first, "A moved the conversation off the refused key");
    let session = SessionId::new("api:session:the-conversation");
    until("B's binding follows A's", || rig.b.pool.bound_key(&session, rig.now()) == Some(rig.b.id(&moved))).await;
    for _ in 0..2 {
        assert_eq!(rig.ask(&rig.b, "the-conversation").await.0, 200, "B serves the conversation");
    }
    let on_b = rig.b.served("the-conversation");
    assert_eq!(on_b[on_b.len() - 2..], [moved.clone(), moved], "on the key A moved it to");
}
