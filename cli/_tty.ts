// Colour only on a terminal: citty and consola decide once, when they load, from NO_COLOR, so
// this module is imported first by both entry points and says so before they look.
if (!process.stdout.isTTY && process.env.FORCE_COLOR === undefined) process.env.NO_COLOR ??= "1";
