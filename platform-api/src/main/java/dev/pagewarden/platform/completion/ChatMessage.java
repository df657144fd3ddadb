package dev.pagewarden.platform.completion;

/** One chat turn: role (system, developer, user, assistant) and its text. */
record ChatMessage(String role, String content) {
}
